import Foundation

extension StringProtocol {
    /// The rest after `prefix`, or nil when the text does not start with it.
    func dropPrefix(_ prefix: String) -> SubSequence? {
        hasPrefix(prefix) ? self[index(startIndex, offsetBy: prefix.count)...] : nil
    }

    /// The text between the first `open` and the next `close` after it.
    func between(_ open: String, _ close: String) -> SubSequence? {
        guard let a = range(of: open), let b = self[a.upperBound...].range(of: close) else { return nil }
        return self[a.upperBound..<b.lowerBound]
    }

    /// The text after the first `marker`.
    func after(_ marker: String) -> SubSequence? {
        range(of: marker).map { self[$0.upperBound...] }
    }

    func trimmingSpaces() -> String {
        trimmingCharacters(in: .whitespaces)
    }
}
