import Foundation

/// The bottom of the diamond: everything depends on it.
public enum Leaf {
    public static func double(_ x: Int) -> Int { x * 2 }

    /// Read from the target's resource bundle, so a resource change is a real input of every test above.
    public static func greeting() -> String {
        guard let url = Bundle.module.url(forResource: "greeting", withExtension: "txt"),
              let text = try? String(contentsOf: url, encoding: .utf8) else { return "" }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
