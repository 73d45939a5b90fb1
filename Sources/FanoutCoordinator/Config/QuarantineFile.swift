import FanoutCore
import Foundation
import Yams

/// Reads and writes the quarantine file, `fanout-quarantine.yml` (docs/quarantine.md).
///
/// A file of its own, not a section of fanout.yml: `fanout quarantine add/remove` and
/// `fanout history flaky --propose` rewrite it, and rewriting a hand-written config would lose its comments and
/// layout. It is YAML like the config, read as strictly: an unknown key, a missing field or a bad date names the
/// file, the line and the key (exit 2).
public enum QuarantineFile {
    public static let defaultName = "fanout-quarantine.yml"

    /// The entries of the file at `path`; an empty quarantine when there is no such file.
    public static func load(_ path: String) throws(FanoutError) -> Quarantine {
        guard FileManager.default.fileExists(atPath: path) else { return Quarantine() }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw FanoutError("cannot read the quarantine file \(path): \(error.localizedDescription)",
                              hint: "Check the path given to --quarantine (or `quarantine:` in fanout.yml).")
        }
        return try parse(text, file: path)
    }

    public static func parse(_ text: String, file: String) throws(FanoutError) -> Quarantine {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw FanoutError("\(file): not valid YAML: \(error)", hint: "See docs/quarantine.md for the format.")
        }
        guard let root else { return Quarantine() }
        let top = ConfigNode(node: root, path: "", file: file, environment: [:])
        let keys = try top.mapping(allowed: ["version", "tests"])
        if let version = keys["version"], try version.int(min: 1) != 1 {
            throw version.fail("must be 1 (this Fanout reads version 1 of the quarantine format)")
        }
        guard let list = keys["tests"] else { return Quarantine() }
        if case .scalar(let s) = list.node, s.string.isEmpty || s.string == "null" { return Quarantine() }
        var entries: [QuarantineEntry] = []
        for node in try list.list() {
            let e = try node.mapping(allowed: ["test", "destination", "mode", "reason", "owner", "issue", "added",
                                               "expires"])
            func required(_ key: String, _ what: String) throws(FanoutError) -> ConfigNode {
                guard let value = e[key] else { throw node.fail("needs `\(key)`: \(what)") }
                return value
            }
            let test = try required("test", "Module.Class/test, or Module.Class for the whole class")
            let name = try test.string()
            guard Self.isTestName(name) else {
                throw test.fail("must be Module.Class/test or Module.Class (got '\(name)')")
            }
            let mode = try required("mode", "mute (runs, does not fail the run) or skip (does not run)")
            let reason = try required("reason", "why it is quarantined")
            let added = try required("added", "the day it was added, YYYY-MM-DD")
            let expires = try required("expires", "the day after which it stops applying, YYYY-MM-DD")
            let entry = QuarantineEntry(
                test: name, destination: try e["destination"]?.string(),
                mode: QuarantineMode(rawValue: try mode.oneOf(QuarantineMode.allCases.map(\.rawValue))) ?? .mute,
                reason: try reason.string(), owner: try e["owner"]?.string(), issue: try e["issue"]?.string(),
                added: try day(added), expires: try day(expires))
            guard !entry.reason.trimmingCharacters(in: .whitespaces).isEmpty else { throw reason.fail("must not be empty") }
            guard entry.owner?.isEmpty == false || entry.issue?.isEmpty == false else {
                throw node.fail("needs `owner` or `issue` (who fixes it, or where it is tracked), so it is not forgotten")
            }
            guard entry.expires >= entry.added else {
                throw e["expires"]?.fail("is before `added` (\(entry.added))") ?? node.fail("expires before it was added")
            }
            if entries.contains(where: { $0.test == entry.test && $0.destination == entry.destination }) {
                throw node.fail("quarantines \(entry.label) a second time: keep one entry per test and destination")
            }
            entries.append(entry)
        }
        return Quarantine(entries: entries)
    }

    /// `Module.Class/test` or `Module.Class`: a module, a dot, a class; a test name after a slash may hold anything.
    static func isTestName(_ name: String) -> Bool {
        let suite = name.split(separator: "/", maxSplits: 1).first.map(String.init) ?? ""
        guard let dot = suite.firstIndex(of: "."), dot != suite.startIndex, suite.index(after: dot) != suite.endIndex else {
            return false
        }
        return !name.contains(where: \.isNewline) && !name.hasSuffix("/")
    }

    private static func day(_ node: ConfigNode) throws(FanoutError) -> String {
        let text = try node.string()
        guard isDay(text) else { throw node.fail("must be a day, YYYY-MM-DD (got '\(text)')") }
        return text
    }

    /// `YYYY-MM-DD` with a real month and day.
    public static func isDay(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let month = Int(parts[1]), let day = Int(parts[2]) else { return false }
        return (1...12).contains(month) && (1...31).contains(day)
    }

    /// Today (UTC) as `YYYY-MM-DD`, or that day `days` later.
    public static func day(_ date: Date = Date(), plus days: Int = 0) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let shifted = calendar.date(byAdding: .day, value: days, to: date) ?? date
        let c = calendar.dateComponents([.year, .month, .day], from: shifted)
        return String(format: "%04d-%02d-%02d", c.year ?? 1970, c.month ?? 1, c.day ?? 1)
    }

    /// The day `days` after the day `from` (`YYYY-MM-DD`).
    public static func day(plus days: Int, from: String) -> String {
        let parts = from.split(separator: "-").compactMap { Int($0) }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        guard parts.count == 3,
              let date = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2], hour: 12))
        else { return day(Date(), plus: days) }
        return day(date, plus: days)
    }

    /// The file's text: a header that says what it is, then one mapping per entry, in test order.
    public static func render(_ quarantine: Quarantine) throws(FanoutError) -> String {
        let sorted = quarantine.entries.sorted { ($0.test, $0.destination ?? "") < ($1.test, $1.destination ?? "") }
        let entries: [Node] = sorted.map { e in
            var pairs: [(Node, Node)] = [(Node("test"), Node(e.test))]
            if let d = e.destination { pairs.append((Node("destination"), Node(d))) }
            pairs += [(Node("mode"), Node(e.mode.rawValue)), (Node("reason"), Node(e.reason))]
            if let o = e.owner { pairs.append((Node("owner"), Node(o))) }
            if let i = e.issue { pairs.append((Node("issue"), Node(i))) }
            pairs += [(Node("added"), Node(e.added)), (Node("expires"), Node(e.expires))]
            return Node.mapping(Node.Mapping(pairs))
        }
        let root = Node.mapping(Node.Mapping([(Node("version"), Node("1")),
                                              (Node("tests"), Node.sequence(Node.Sequence(entries)))]))
        let body: String
        do {
            body = try Yams.serialize(node: root, sortKeys: false)
        } catch {
            throw FanoutError("cannot write the quarantine file: \(error)")
        }
        return header + body
    }

    static let header = """
        # Fanout quarantine: tests whose failures do not fail the run (mode: mute) or that do not run (mode: skip).
        # Commit this file. Every entry has a reason, an owner or issue, and an expiry: from the day after `expires`
        # it warns and stops applying. Edit it by hand, or with `fanout quarantine add/remove` and
        # `fanout history flaky --propose`. Format: docs/quarantine.md.

        """

    /// Writes the file (atomically: a reader never sees half of it).
    public static func write(_ quarantine: Quarantine, to path: String) throws(FanoutError) {
        let text = try render(quarantine)
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw FanoutError("cannot write the quarantine file \(path): \(error.localizedDescription)")
        }
    }
}
