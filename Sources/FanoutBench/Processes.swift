import FanoutAgents
import FanoutCore
import Foundation

/// A finished child process: how it ended, what it wrote, and when it ran (seconds since `Clock.origin`).
struct ProcessResult: Sendable {
    var ending: UnitEnding
    var stdout: String
    var stderr: String
    var started: Double
    var ended: Double

    var seconds: Double { ended - started }
    var succeeded: Bool { ending == .exited(0) }
    /// The exit status, or 128+signal, as a shell reports it (nil when it did not start or was stopped).
    var exitCode: Int32? {
        switch ending {
        case .exited(let code): code
        case .signaled(let signal): 128 + signal
        default: nil
        }
    }

    /// The last lines of stderr (else stdout), for error messages.
    var tail: String {
        let text = stderr.isEmpty ? stdout : stderr
        return text.split(separator: "\n", omittingEmptySubsequences: true).suffix(8).joined(separator: "\n")
    }
}

/// Monotonic seconds for timing cases (never the wall clock, which can jump).
enum BenchClock {
    static let origin = ContinuousClock.now
    static func now() -> Double {
        (ContinuousClock.now - origin).seconds
    }
}

/// Runs the processes of the benchmark through Fanout's own `LocalProcess`: each one in its own process group, so an
/// interrupted benchmark can stop it with everything it started (see `Interrupts`).
enum Processes {
    /// Past `timeout`, the process gets SIGTERM, as on an interrupt (a `fanout run` then stops the tests it started,
    /// in process groups of their own, which killing its group alone would leave running), and its group SIGKILL
    /// after `grace` seconds more; it then ends as timed out.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                    timeout: Double? = nil, grace: Double = 15) async -> ProcessResult {
        let command = Command(executable: resolve(executable), arguments: arguments, environment: environment)
        let (stream, continuation) = AsyncStream<ProcessEvent>.makeStream(bufferingPolicy: .unbounded)
        let start = BenchClock.now()
        let process = LocalProcess.start(command, timeout: nil, events: continuation)
        if let process { Interrupts.track(process.pid) }
        let timer = Task<Bool, Never> {
            guard let process, let timeout, (try? await Task.sleep(for: .seconds(timeout))) != nil else { return false }
            kill(process.pid, SIGTERM)
            if (try? await Task.sleep(for: .seconds(grace))) != nil { process.cancel() }
            return true
        }
        var out: [UInt8] = [], err: [UInt8] = []
        var ending = UnitEnding.failedToStart("no ending reported")
        for await event in stream {
            switch event {
            case .output(.stdout, let bytes): out += bytes
            case .output(.stderr, let bytes): err += bytes
            case .ended(let e): ending = e
            case .usage: break
            }
        }
        let end = BenchClock.now()
        timer.cancel()
        if await timer.value, let timeout { ending = .timedOut(limit: timeout) }
        if let process { Interrupts.untrack(process.pid) }
        return ProcessResult(ending: ending, stdout: String(decoding: out, as: UTF8.self),
                             stderr: String(decoding: err, as: UTF8.self), started: start, ended: end)
    }

    /// `run`, and the CPU seconds (user + system) of the process and every descendant it waited for, from
    /// `/usr/bin/time` when it is installed (nil without it).
    static func runMeasuringCPU(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                                timeout: Double? = nil) async -> (ProcessResult, cpu: Double?) {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/time") else {
            return (await run(executable, arguments, environment: environment, timeout: timeout), nil)
        }
        let file = NSTemporaryDirectory() + "fanout-bench-time-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: file) }
        let r = await run("/usr/bin/time", ["-f", "%U %S", "-o", file, resolve(executable)] + arguments,
                          environment: environment, timeout: timeout)
        let last = ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").last ?? ""
        let parts = last.split(separator: " ").compactMap { Double($0) }
        return (r, parts.count == 2 ? parts[0] + parts[1] : nil)
    }

    /// Like `run`, but a failure is an error that shows the command and its last lines of output.
    @discardableResult
    static func check(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                      timeout: Double? = nil) async throws -> ProcessResult {
        let r = await run(executable, arguments, environment: environment, timeout: timeout)
        guard r.succeeded else {
            throw BenchError("\(([executable] + arguments).joined(separator: " ")) ended with \(r.ending):\n\(r.tail)")
        }
        return r
    }

    /// The absolute path of a program (posix_spawn does not search PATH).
    static func resolve(_ name: String) -> String {
        if name.contains("/") { return name }
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return name
    }
}

/// An error for people: what went wrong, said once.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Progress on stderr, flushed at once (the full benchmark runs for many minutes).
func progress(_ line: String) {
    FileHandle.standardError.write(Data(("[bench] " + line + "\n").utf8))
}
