import Foundation
import XCTest

/// Seconds from an environment variable (0 when unset).
private func seconds(_ name: String) -> Double {
    Double(ProcessInfo.processInfo.environment[name] ?? "") ?? 0
}

private func isSet(_ name: String) -> Bool { ProcessInfo.processInfo.environment[name] == "1" }

/// Work the optimizer cannot remove: a xorshift walk.
private func churn(_ rounds: Int, _ seed: UInt64) -> UInt64 {
    var x = seed | 1
    for _ in 0..<rounds {
        x ^= x << 13
        x ^= x >> 7
        x ^= x << 17
    }
    return x
}

final class ComputeTests: XCTestCase {
    /// LONG_COMPUTE=s: computes for s seconds of wall time, printing nothing.
    func testComputesSilently() {
        let end = Date().addingTimeInterval(seconds("LONG_COMPUTE"))
        var x: UInt64 = 42
        repeat { x = churn(200_000, x) } while Date() < end
        XCTAssertNotEqual(x, 0)
    }
}

final class BlockTests: XCTestCase {
    /// LONG_BLOCK=s: blocks for s seconds with neither output nor CPU (an integration test waiting on a server).
    func testBlocksSilently() {
        Thread.sleep(forTimeInterval: seconds("LONG_BLOCK"))
        XCTAssertTrue(true)
    }
}

final class HangTests: XCTestCase {
    /// LONG_HANG=1: a deadlock.
    func testBlocksForever() {
        if isSet("LONG_HANG") { DispatchSemaphore(value: 0).wait() }
        XCTAssertTrue(true)
    }
}

final class SpinTests: XCTestCase {
    /// LONG_SPIN=1: a busy infinite loop.
    func testSpinsForever() {
        var x: UInt64 = 7
        while isSet("LONG_SPIN") { x = churn(1_000_000, x) }
        XCTAssertNotEqual(x, 0)
    }
}

final class UsualTests: XCTestCase {
    /// LONG_USUAL=s: takes s seconds; LONG_USUAL_HANG=1: then hangs.
    func testUsuallyQuick() {
        Thread.sleep(forTimeInterval: seconds("LONG_USUAL"))
        if isSet("LONG_USUAL_HANG") { DispatchSemaphore(value: 0).wait() }
        XCTAssertTrue(true)
    }

    func testAfterwards() {
        XCTAssertTrue(true)
    }
}

final class StarveTests: XCTestCase {
    /// LONG_STARVE=s: computes for s seconds of wall time, printing nothing, starved of CPU: a child process (in
    /// this unit's process group) computes on one core as SCHED_IDLE while its own child, in a process group of
    /// its own (so not this unit's), keeps that core busy at normal priority. It gets almost no CPU time, but it is
    /// ready to run all along, as a test on a machine whose cores other work has taken. Linux only (SCHED_IDLE).
    func testComputesStarved() throws {
        let s = seconds("LONG_STARVE")
        guard s > 0 else { return }
        // posix_spawn, not Foundation's Process: that puts its child in a process group of its own.
        let args = ["/usr/bin/python3", "-c", Self.starved, String(s)]
        var argv: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        XCTAssertEqual(posix_spawn(&pid, args[0], nil, nil, &argv, environ), 0)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        XCTAssertEqual(status, 0, "python3's wait status")
    }

    /// `python3 -c starved SECONDS`.
    static let starved = """
        import os, sys, time, signal
        seconds = float(sys.argv[1])
        core = min(os.sched_getaffinity(0))
        parent = os.getpid()
        hog = os.fork()
        if hog == 0:
            os.setpgid(0, 0)
            os.sched_setaffinity(0, {core})
            end = time.monotonic() + seconds + 30
            while time.monotonic() < end and os.getppid() == parent:
                pass
            os._exit(0)
        os.sched_setaffinity(0, {core})
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        end = time.monotonic() + seconds
        x = 0
        while time.monotonic() < end:
            x += 1
        # Not waited for: its CPU time would count as this process's children's.
        os.kill(hog, signal.SIGKILL)
        """
}
