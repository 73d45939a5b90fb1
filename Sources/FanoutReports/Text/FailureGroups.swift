import FanoutCore

/// Failures that share one cause, as a person triaging would group them: one bug failing 40 tests is one group.
public struct FailureGroup: Sendable, Hashable {
    /// The headline message with what varies from test to test masked (numbers, addresses, paths, ids).
    public var signature: String
    /// The outcome of the group's tests (failed, crashed, timed out, not run): different outcomes never share a group.
    public var outcome: Outcome
    /// The tests, in report order (destination, then id).
    public var results: [TestResult]
}

public enum FailureGroups {
    /// Every result that needs attention (failed, crashed, timed out, not run), grouped by outcome and normalized
    /// headline; the largest groups first, then by signature.
    public static func groups(_ report: RunReport) -> [FailureGroup] {
        let units = Dictionary(report.units.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var order: [String] = []
        var groups: [String: FailureGroup] = [:]
        for result in report.results where result.needsAttention {
            let attempt = result.decidingAttempt
            let headline = ReportFacts.headline(of: attempt, outcome: result.outcome, unit: attempt.flatMap { units[$0.unit] })
            let signature = normalize(headline)
            let key = result.outcome.rawValue + "\u{0}" + signature
            if groups[key] == nil {
                order.append(key)
                groups[key] = FailureGroup(signature: signature, outcome: result.outcome, results: [])
            }
            groups[key]?.results.append(result)
        }
        return order.compactMap { groups[$0] }.sorted {
            $0.results.count != $1.results.count ? $0.results.count > $1.results.count
                : ($0.outcome, $0.signature) < ($1.outcome, $1.signature)
        }
    }

    /// The message with its varying parts masked: absolute paths → `<path>`, UUIDs → `<uuid>`, hex addresses →
    /// `0x…`, numbers → `N`. Only the first line counts (stack traces and dumps follow it), at most 300 characters.
    public static func normalize(_ message: String) -> String {
        let first = message.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: true).first.map(String.init) ?? ""
        let scalars = Array(TextSanitizer.terminalSafe(first, singleLine: true).unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        func isHex(_ s: Unicode.Scalar) -> Bool { ("0"..."9").contains(s) || ("a"..."f").contains(s) || ("A"..."F").contains(s) }
        func isDigit(_ s: Unicode.Scalar) -> Bool { ("0"..."9").contains(s) }
        func isWordChar(_ s: Unicode.Scalar) -> Bool { s.properties.isAlphabetic || isDigit(s) || s == "_" }
        func append(_ text: String) { out.append(contentsOf: text.unicodeScalars) }
        while i < scalars.count, out.count < 300 {
            let s = scalars[i]
            let previous: Unicode.Scalar? = i > 0 ? scalars[i - 1] : nil
            let atWordStart = previous.map { !isWordChar($0) } ?? true
            // An absolute path of two or more parts ("/tmp/x", not "</b>"): "/" at a word boundary followed by a path
            // character, up to whitespace, ':' or a quote.
            if s == "/", atWordStart, previous != "/", i + 1 < scalars.count, isWordChar(scalars[i + 1]) || scalars[i + 1] == "." {
                var j = i + 1
                while j < scalars.count, !scalars[j].properties.isWhitespace, !":\"'(),;]>".unicodeScalars.contains(scalars[j]) { j += 1 }
                if scalars[(i + 1)..<j].contains("/") {
                    append("<path>")
                    i = j
                    continue
                }
            }
            // A UUID: 8-4-4-4-12 hex digits.
            if atWordStart, i + 36 <= scalars.count {
                let candidate = scalars[i..<(i + 36)]
                let dashes = [8, 13, 18, 23]
                let isUUID = candidate.enumerated().allSatisfy { dashes.contains($0.offset) ? $0.element == "-" : isHex($0.element) }
                if isUUID, i + 36 == scalars.count || !isWordChar(scalars[i + 36]) {
                    append("<uuid>")
                    i += 36
                    continue
                }
            }
            // A hex address: 0x followed by hex digits.
            if s == "0", atWordStart, i + 2 < scalars.count, scalars[i + 1] == "x" || scalars[i + 1] == "X", isHex(scalars[i + 2]) {
                var j = i + 2
                while j < scalars.count, isHex(scalars[j]) { j += 1 }
                append("0x…")
                i = j
                continue
            }
            // A number (with a fraction): not when glued to letters (test42, utf8 stay as they are).
            if isDigit(s), atWordStart || previous == "-" || previous == "." {
                var j = i
                while j < scalars.count, isDigit(scalars[j]) { j += 1 }
                if j + 1 < scalars.count, scalars[j] == ".", isDigit(scalars[j + 1]) {
                    j += 1
                    while j < scalars.count, isDigit(scalars[j]) { j += 1 }
                }
                if j == scalars.count || !scalars[j].properties.isAlphabetic {
                    append("N")
                    i = j
                    continue
                }
            }
            out.append(s)
            i += 1
        }
        return String(out)
    }
}
