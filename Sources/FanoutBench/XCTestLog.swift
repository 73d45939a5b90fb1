/// The lines of XCTest's Linux console output that the benchmark needs: one per finished test case.
/// `Test Case 'Class.testName' passed (0.003 seconds)` (no module name on Linux).
enum XCTestLog {
    struct Case: Sendable, Hashable {
        var suite: String
        var name: String
        var outcome: String
        var seconds: Double
    }

    static func cases(in text: String) -> [Case] {
        var found: [Case] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            guard line.hasPrefix("Test Case '"), line.hasSuffix(" seconds)") else { continue }
            let rest = line.dropFirst("Test Case '".count)
            guard let quote = rest.firstIndex(of: "'") else { continue }
            let id = rest[..<quote]
            let tail = rest[rest.index(after: quote)...].split(separator: " ")
            // tail: ["passed", "(0.003", "seconds)"]
            guard tail.count == 3, tail[1].hasPrefix("("), let seconds = Double(tail[1].dropFirst()),
                  let dot = id.lastIndex(of: ".") else { continue }
            found.append(Case(suite: String(id[..<dot]), name: String(id[id.index(after: dot)...]),
                              outcome: String(tail[0]), seconds: seconds))
        }
        return found
    }
}
