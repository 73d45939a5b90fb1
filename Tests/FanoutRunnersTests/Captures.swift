import FanoutCore
import FanoutRunners
import Foundation

/// Real output captured from the demo suite (Tests/Fixtures/Captured, see its README for the commands).
enum Captures {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/Captured")

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: folder.appendingPathComponent(name)))
    }

    static func text(_ name: String) throws -> String {
        String(decoding: try bytes(name), as: UTF8.self)
    }
}

/// A unit of whole classes, for parsers that map console names back to modules.
func unit(_ suites: [(String, String)], framework: Framework = .xctest) -> WorkUnit {
    WorkUnit(id: 1, items: suites.map { module, name in
        WorkItem(suite: SuiteID(module: module, name: name), framework: framework, destination: "local", tests: [],
                 isWholeSuite: true, estimate: 1, source: .noHistory(secondsPerTest: 0.1))
    })
}

/// Feeds output to a parser in chunks of `chunk` bytes (1 = byte by byte) and returns every event.
func parse(_ parser: some OutputParser, stdout: [UInt8], stderr: [UInt8] = [], chunk: Int = 4096) -> [TestEvent] {
    var p = parser
    var events: [TestEvent] = []
    var i = 0
    while i < stdout.count {
        events += p.consume(stdout: Array(stdout[i..<min(i + chunk, stdout.count)]))
        i += chunk
    }
    events += p.consume(stderr: stderr)
    return events + p.finish()
}

extension [TestEvent] {
    var started: [TestID] { compactMap { if case .started(let id) = $0 { id } else { nil } } }
    var ended: [(TestID, TestStatus, Double, String?)] {
        compactMap { if case .ended(let id, let s, let d, let r) = $0 { (id, s, d, r) } else { nil } }
    }
    var issues: [(TestID, Issue)] { compactMap { if case .issue(let id, let i) = $0 { (id, i) } else { nil } } }
    var measurements: [FanoutCore.Measurement] { compactMap { if case .measured(let m) = $0 { m } else { nil } } }
    var suiteTimes: [(SuiteID, Double)] { compactMap { if case .suiteEnded(let s, let d) = $0 { (s, d) } else { nil } } }
}
