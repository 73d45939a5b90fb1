@testable import FanoutCoordinator
import FanoutCore
@testable import FanoutHistory
import FanoutTestSupport
import Foundation
import Testing

/// The run's history session reads every page of the file at open (a tenth of a second per 20 MB) only when the file
/// is not exactly as the last session's close left it.
@Suite(.timeLimit(.minutes(1))) struct HistorySessionTests {
    @Test func aFileAsTheLastCloseLeftItIsNotCheckedAgainAndAChangedOneIs() throws {
        let dir = try TempDir()
        let path = dir.file("h/history.sqlite")
        func checks() -> Int { HistoryStore.pageChecks.withLock { $0[path] ?? 0 } }
        func record(_ id: String, minute: Int) throws {
            let session = HistorySession(path: path)
            var run = ReportBuilder(id, minute: minute)
            run.addClass("LoginTests", actual: 2.5)
            try session.store().record(run.build())
            session.close()
        }
        try record("run-1", minute: 0)
        let first = checks()
        #expect(FileManager.default.fileExists(atPath: path + ".checked"), "the state the close left is kept")

        try record("run-2", minute: 1)
        #expect(checks() == first, "as the last close left it: its pages are not read again")

        // Touched since (its bytes the same): checked again, and kept.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_000_000)], ofItemAtPath: path)
        let session = HistorySession(path: path)
        #expect(try session.existing()?.recentRuns(limit: 5).map(\.runID) == ["run-2", "run-1"])
        #expect(checks() == first + 1, "changed since the last close: checked")
        session.close()

        // A session that never closes leaves no stamp behind: the next one checks.
        let unclosed = HistorySession(path: path)
        _ = try unclosed.existing()
        #expect(checks() == first + 1)
        try Data("not the state".utf8).write(to: URL(fileURLWithPath: path + ".checked"))
        let next = HistorySession(path: path)
        _ = try next.existing()
        #expect(checks() == first + 2, "a stamp of another state: checked")
        next.close()
        unclosed.close()
    }
}
