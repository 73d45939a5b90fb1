import FanoutCore
import FanoutTestSupport
@testable import FanoutHistory
import Foundation
import Testing

/// Two runs in one package share one history file: each store below has its own SQLite connection to one real file
/// on disk, and they write at the same moment from two threads (SQLite locks the file between connections as it does
/// between processes; `fanout run` twice at once is pinned by the integration tests).
@Suite("One history file, two writers at once", .timeLimit(.minutes(2)))
struct ConcurrentHistoryTests {
    /// Runs `body(0)` and `body(1)` on two threads released at the same moment; returns their errors.
    func together(_ body: @escaping @Sendable (Int) throws -> Void) -> [String] {
        let errors = Errors()
        let start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        for side in 0..<2 {
            group.enter()
            Thread.detachNewThread {
                start.wait()
                do { try body(side) } catch { errors.add("\(side): \(error)") }
                group.leave()
            }
        }
        start.signal()
        start.signal()
        if group.wait(timeout: .now() + 90) == .timedOut { errors.add("the writers did not finish within 90 s") }
        return errors.all
    }

    final class Errors: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        func add(_ e: String) { lock.withLock { list.append(e) } }
        var all: [String] { lock.withLock { list } }
    }

    @Test func twoWritersBothRecordEveryRunCompletely() throws {
        let folder = try TempDir()
        let path = folder.file("history.sqlite")
        let (first, _) = try HistoryStore.open(at: path)
        let (second, _) = try HistoryStore.open(at: path)
        let stores = [first, second]
        let runs = 15, classes = 30, tests = 6
        let errors = together { side in
            for n in 0..<runs {
                var run = ReportBuilder("w\(side)-\(n)", minute: n * 2 + side)
                for c in 0..<classes { run.addClass("Class\(c)", tests: tests, actual: Double(c) / 10) }
                try stores[side].record(run.build())
                // A reader between the writes, as a run that plans while another records.
                _ = try stores[1 - side].timingHistory(destination: "local")
            }
        }
        #expect(errors.isEmpty, "\(errors)")
        let (reopened, warnings) = try HistoryStore.open(at: path)
        #expect(warnings.isEmpty)
        let recorded = try reopened.recentRuns(limit: 100)
        #expect(Set(recorded.map(\.runID)) == Set((0..<2).flatMap { side in (0..<runs).map { "w\(side)-\($0)" } }),
                "both histories are complete")
        #expect(recorded.allSatisfy { $0.counts.total == classes * tests }, "every run with all of its tests")
        #expect(try reopened.timingHistory(destination: "local").classes.count == classes)
    }

    @Test func twoOpenersOfOneCorruptFileMoveItAsideOnceAndShareTheFreshOne() throws {
        let folder = try TempDir()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        for round in 0..<8 {
            // A file per round: the stores of a round stay open until their threads are gone, and garbage written
            // under a live connection is a different story (SQLite reads its pages from the WAL it still holds).
            let path = folder.file("history-\(round).sqlite")
            try Data("not a database, round \(round)".utf8).write(to: URL(fileURLWithPath: path))
            let opened = Opened()
            let errors = together { side in
                let (store, warnings) = try HistoryStore.open(at: path, now: now)
                opened.set(side, store: store, warned: !warnings.isEmpty)
            }
            #expect(errors.isEmpty, "round \(round): \(errors)")
            let stores = opened.stores
            try #require(stores.count == 2)
            #expect(opened.warnings == 1, "round \(round): one of them moved the file aside, the other found the fresh one")
            let aside = try folder.files().filter {
                $0.hasPrefix("history-\(round).sqlite.corrupt-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
            }
            #expect(aside.count == 1, "round \(round): moved aside once, never twice: \((try? folder.files()) ?? [])")
            // Both write into the one fresh file.
            var run = ReportBuilder("round-\(round)", minute: round)
            run.addClass("LoginTests", actual: 1)
            try stores[0].record(run.build())
            #expect(try stores[1].recentRuns(limit: 5).map(\.runID) == ["round-\(round)"], "round \(round)")
        }
    }

    final class Opened: @unchecked Sendable {
        private let lock = NSLock()
        private var byside: [Int: HistoryStore] = [:]
        private var warned = 0
        func set(_ side: Int, store: HistoryStore, warned w: Bool) {
            lock.withLock {
                byside[side] = store
                if w { warned += 1 }
            }
        }
        var stores: [HistoryStore] { lock.withLock { byside.keys.sorted().compactMap { byside[$0] } } }
        var warnings: Int { lock.withLock { warned } }
    }
}
