import FanoutSSH
import Foundation
import Testing

extension FleetTests {
    @Suite(.timeLimit(.minutes(10))) struct Exec {
        @Test func stdoutAndStderrAreSeparate() async throws {
            let connection = try await TestFleet.connect(1)
            let result = try await connection.run("echo out1; echo err1 >&2; echo out2; echo err2 >&2")
            #expect(result.stdoutText == "out1\nout2\n")
            #expect(result.stderrText == "err1\nerr2\n")
            #expect(result.status == 0)
            #expect(result.signal == nil)
            #expect(result.succeeded)

            // Large interleaved output on both streams: neither stalls the other (channel window).
            let big = try await connection.run(
                "head -c 3000000 /dev/zero | tr '\\0' o & head -c 2000000 /dev/zero | tr '\\0' e >&2; wait")
            #expect(big.stdout.count == 3_000_000)
            #expect(big.stderr.count == 2_000_000)
            #expect(big.stdout.allSatisfy { $0 == UInt8(ascii: "o") })
            #expect(big.stderr.allSatisfy { $0 == UInt8(ascii: "e") })
            await connection.close()
        }

        @Test func exitStatus() async throws {
            let connection = try await TestFleet.connect(1)
            let result = try await connection.run("echo before; exit 3")
            #expect(result.status == 3)
            #expect(result.signal == nil)
            #expect(!result.succeeded)
            #expect(result.stdoutText == "before\n")
            // Output closed long before the exit: the status still arrives (after the remote EOF we close our side
            // and wait for the server's CLOSE, which follows the exit status).
            let late = try await connection.run("echo early; exec >&- 2>&-; sleep 0.5; exit 4")
            #expect(late.status == 4)
            #expect(late.stdoutText == "early\n")
            #expect(late.duration >= 0.5)
            await connection.close()
        }

        @Test func exitSignalIsReported() async throws {
            let connection = try await TestFleet.connect(1)
            let killed = try await connection.run("kill -9 $$")
            #expect(killed.signal == "KILL")
            #expect(!killed.succeeded)
            let terminated = try await connection.run("kill -TERM $$")
            #expect(terminated.signal == "TERM")
            await connection.close()
        }

        @Test func streamEventsEndWithExactlyOneExit() async throws {
            let connection = try await TestFleet.connect(1)
            var events: [SSHExecEvent] = []
            for await event in connection.execute("printf a; sleep 0.1; printf b >&2; exit 7") {
                events.append(event)
            }
            #expect(events.last == .exited(status: 7, signal: nil))
            #expect(events.filter { if case .exited = $0 { true } else { false } }.count == 1)
            #expect(events.contains(.stdout(Array("a".utf8))))
            #expect(events.contains(.stderr(Array("b".utf8))))
            await connection.close()
        }

        @Test func silentCommandLongerThanDeadPeerTimeoutIsNotDeclaredDead() async throws {
            let connection = try await TestFleet.connect(1, options: TestFleet.options(deadPeerTimeout: 3))
            let start = now()
            let result = try await connection.run("sleep 7; echo still-here")
            #expect(result.stdoutText == "still-here\n")
            #expect(result.status == 0)
            #expect(now() - start >= 7)
            #expect(connection.isAlive)
            // Idle (no command at all) for longer than the timeout: still alive, still usable, and the I/O thread
            // sleeps in poll() (keepalives only) instead of spinning.
            let cpuBefore = processCPUTime()
            try await Task.sleep(for: .seconds(4))
            let cpu = processCPUTime() - cpuBefore
            #expect(cpu < 0.2, "the process used \(cpu) s of CPU while the connection idled")
            #expect(connection.isAlive)
            #expect(try await connection.run("echo idle-ok").stdoutText == "idle-ok\n")
            await connection.close()
        }

        @Test func manyConcurrentChannelsOnOneConnection() async throws {
            let connection = try await TestFleet.connect(1)
            let count = 30 // MaxSessions 32 on the fleet: minus our internal channel, minus one spare
            let start = now()
            let results = try await withThrowingTaskGroup(of: (Int, SSHCommandResult).self) { group in
                for i in 0..<count {
                    group.addTask { (i, try await connection.run("sleep 0.5; echo \(i)")) }
                }
                var all: [Int: SSHCommandResult] = [:]
                for try await (i, result) in group { all[i] = result }
                return all
            }
            let elapsed = now() - start
            #expect(results.count == count)
            for i in 0..<count {
                #expect(results[i]?.stdoutText == "\(i)\n")
            }
            // They ran at the same time, not one after another.
            #expect(elapsed < 5, "took \(elapsed) s")
            print("\(count) concurrent `sleep 0.5` channels on one connection: \(milliseconds(elapsed))")
            await connection.close()
        }

        @Test func tooManyChannelsFailClearlyAndOthersSurvive() async throws {
            let connection = try await TestFleet.connect(1)
            let results = await withTaskGroup(of: Result<SSHCommandResult, SSHError>.self) { group in
                for _ in 0..<34 {
                    group.addTask {
                        do throws(SSHError) {
                            return .success(try await connection.run("sleep 0.5"))
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                var all: [Result<SSHCommandResult, SSHError>] = []
                for await result in group { all.append(result) }
                return all
            }
            let failures = results.compactMap { if case .failure(let e) = $0 { e } else { nil } }
            #expect(failures.count >= 3)
            for failure in failures {
                guard case .channelFailed = failure else {
                    Issue.record("expected channelFailed, got \(failure)")
                    continue
                }
                #expect(failure.description.contains("MaxSessions"))
            }
            #expect(try await connection.run("echo fine").stdoutText == "fine\n")
            if let first = failures.first { print("channel limit message: \(first)") }
            await connection.close()
        }

        @Test func timeoutClosesTheChannel() async throws {
            let connection = try await TestFleet.connect(1)
            let start = now()
            do {
                _ = try await connection.run("sleep 5", timeout: 0.3)
                Issue.record("should have timed out")
            } catch {
                guard case .commandTimedOut = error else {
                    Issue.record("expected commandTimedOut, got \(error)")
                    return
                }
            }
            #expect(now() - start < 1.5)
            #expect(try await connection.run("echo after").stdoutText == "after\n")
            await connection.close()
        }

        @Test func cancellingTheConsumerClosesTheChannel() async throws {
            let connection = try await TestFleet.connect(1)
            // `exec` keeps the shell's PID, which the command prints first: the remote process is not signalled
            // when a channel closes (libssh2 1.10 cannot), so the test kills it by that PID.
            let task = Task {
                var pid = ""
                for await event in connection.execute("echo $$; exec sleep 30") {
                    if case .stdout(let bytes) = event { pid += String(decoding: bytes, as: UTF8.self) }
                }
                return pid.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            try await Task.sleep(for: .milliseconds(300))
            task.cancel()
            let pid = await task.value
            #expect(Int(pid) != nil)
            // The connection carries on.
            #expect(try await connection.run("echo next").stdoutText == "next\n")
            _ = try await connection.run("kill \(pid)")
            await connection.close()
        }

        @Test func closeEndsRunningCommands() async throws {
            let connection = try await TestFleet.connect(1)
            let stream = connection.execute("echo $$; exec sleep 30")
            var pid = ""
            var last: SSHExecEvent?
            var closed: Double?
            for await event in stream {
                last = event
                if case .stdout(let bytes) = event {
                    pid += String(decoding: bytes, as: UTF8.self)
                    closed = now()
                    await connection.close()
                }
            }
            #expect(last == .failed(.connectionClosed(TestFleet.endpoint(1))))
            #expect(now() - (closed ?? 0) < 1)
            #expect(!connection.isAlive)
            // After close, new requests fail at once.
            do {
                _ = try await connection.run("true")
                Issue.record("run after close should fail")
            } catch {
                #expect(error == .connectionClosed(TestFleet.endpoint(1)))
            }
            let cleanup = try await TestFleet.connect(1)
            _ = try await cleanup.run("kill \(pid.trimmingCharacters(in: .whitespacesAndNewlines))")
            await cleanup.close()
        }
    }
}
