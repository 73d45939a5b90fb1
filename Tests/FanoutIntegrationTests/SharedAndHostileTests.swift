import FanoutAgents
import FanoutCore
import FanoutHistory
import FanoutReports
import Foundation
import Testing

/// Two or more `fanout run`s at once on one history file, and a test suite that tries to drive the terminal of
/// whoever watches it: both with the real `fanout` executable on the real demo suite.
@Suite(.timeLimit(.minutes(10))) struct SharedAndHostileTests {
    @Test func threeRunsAtOnceInOnePackageAllRecordTheirHistory() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let history = dir.file("history.sqlite")
        let filter = "^DemoKitTests\\.(GCD|Prime|Clamp)Tests$"
        let results = try await withThrowingTaskGroup(of: (Int, Int32, String).self) { group in
            for n in 0..<3 {
                group.addTask {
                    let (code, _, err) = try await runCLI(["run", "--bundle", bundle, "--filter", filter, "--slots", "2",
                                                           "--history", history, "--report-dir", dir.file("r\(n)")])
                    return (n, code, err)
                }
            }
            return try await group.reduce(into: [(Int, Int32, String)]()) { $0.append($1) }
        }
        for (n, code, err) in results {
            #expect(code == 0, "run \(n): exit \(code): \(err)")
            #expect(!err.contains("locked"), "run \(n) waited for the others instead of failing: \(err)")
        }
        let runIDs = try (0..<3).map { n in
            try JSONReportReader().read(from: URL(fileURLWithPath: dir.file("r\(n)/report.json"))).runID
        }
        let (store, warnings) = try HistoryStore.open(at: history)
        #expect(warnings.isEmpty)
        let recorded = try store.recentRuns(limit: 10)
        #expect(Set(recorded.map(\.runID)) == Set(runIDs), "every run's history is there")
        #expect(recorded.allSatisfy { $0.counts.total == 9 && $0.counts.passed == 9 }, "each with all of its tests")
    }

    /// Fanout's own escape sequences: colors (SGR) and erasing the status line.
    static let ownSequences = try? NSRegularExpression(pattern: "\u{1B}\\[[0-9;]*m|\u{1B}\\[2K")

    @Test func hostileTestOutputNeverReachesTheTerminalRaw() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let fanout = try fanoutExecutable()
        let run = ShellQuote.join([fanout, "run", "--bundle", bundle, "--filter", "^DemoKitTests\\.(ClampTests|MathSuite)$",
                                   "--history", dir.file("h.sqlite"), "--report-dir", dir.file("r")])
        // A real terminal: script(1) runs fanout on a pty, so it draws its live status line, and copies everything
        // fanout writes to the pty onto its own standard output.
        let command = Command(executable: "/usr/bin/script",
                              arguments: ["-qfec", "stty cols 120 rows 40; exec \(run)", "/dev/null"],
                              environment: ["DEMO_HOSTILE": "1", "TERM": "xterm-256color"])
        let (ending, out, err) = await LocalTransport(slots: 1).capture(command, timeout: 300)
        #expect(ending == .exited(1), "the hostile tests fail: \(ending) \(String(decoding: err, as: UTF8.self))")
        let screen = String(decoding: out, as: UTF8.self)
        #expect(screen.contains("\u{1B}[2K"), "fanout ran on a terminal: it drew its status line")
        #expect(screen.contains("FAILED\u{1B}[0m DemoKitTests.ClampTests/testClampOutsideRange"), "\(screen.debugDescription)")
        #expect(screen.contains("HOSTILE-VISIBLE-XCTEST"), "the failure's message is shown, cleaned")
        #expect(screen.contains("HOSTILE-VISIBLE-TESTING"), "Swift Testing's too")

        let ours = try #require(Self.ownSequences)
        let rest = ours.stringByReplacingMatches(in: screen, range: NSRange(screen.startIndex..., in: screen), withTemplate: "")
        #expect(!rest.contains("\u{1B}"), "no escape of the test's reaches the terminal: \(rest.debugDescription)")
        for scalar: Unicode.Scalar in ["\u{07}", "\u{9B}", "\u{9C}", "\u{9D}", "\u{202E}", "\u{202C}"] {
            #expect(!rest.unicodeScalars.contains(scalar), "U+\(String(scalar.value, radix: 16)) reached the terminal")
        }
        for payload in ["HOSTILE-TITLE", "HOSTILE-LOCATION", "SE9TVElMRS1DTElQQk9BUkQ=", "HOSTILE-LINK", "HOSTILE-C1-TITLE"] {
            #expect(!rest.contains(payload), "\(payload): the whole sequence goes, not only its ESC")
        }
        let lines = rest.split(whereSeparator: { $0 == "\r" || $0 == "\n" || $0 == "\r\n" })
        #expect(!lines.contains { $0.hasPrefix("[  99.9s]") }, "no fake progress line of the test's own")
    }
}
