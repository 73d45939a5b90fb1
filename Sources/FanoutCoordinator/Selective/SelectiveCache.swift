import FanoutCore
import Foundation

/// What selective testing asks the toolchain, remembered between runs (`selective-cache.json` beside the history),
/// because asking costs more than hashing two thousand files: `swift --version` (about 0.3 s) and `swift package
/// describe` (about 1 s, it evaluates the manifest).
///
/// Each answer is keyed by what it depends on, so a stale answer is never used:
/// - the version, by the resolved `swift` executable's state (`FileState`: a new toolchain is a new file);
/// - the graph, by that version, the package's path, and the bytes of its `Package*.swift` manifests and
///   Package.resolved (target folders and dependencies come from the manifest alone).
struct SelectiveCache {
    struct Entries: Codable {
        var toolchainKey: String?
        var toolchain: String?
        var graphKey: String?
        var graph: String?
    }

    let path: String
    private var entries: Entries
    private var dirty = false

    init(historyPath: String) {
        path = URL(fileURLWithPath: historyPath).deletingLastPathComponent().appendingPathComponent("selective-cache.json").path
        entries = (FileManager.default.contents(atPath: path)).flatMap { try? JSONDecoder().decode(Entries.self, from: $0) }
            ?? Entries()
    }

    /// `swift --version`, asked only when the executable changed.
    mutating func toolchain(_ swift: String, ask: () async -> String?) async -> String? {
        let key = FileState.key(swift)
        if let key, entries.toolchainKey == key, let known = entries.toolchain { return known }
        guard let version = await ask() else { return nil }
        entries.toolchainKey = key
        entries.toolchain = version
        dirty = true
        return version
    }

    /// The graph's JSON, asked only when the manifests, the pins or the toolchain changed.
    mutating func graph(package: String, toolchain: String,
                        ask: () async throws(FanoutError) -> Data) async throws(FanoutError) -> Data {
        var hash = SHA256()
        hash.update("\(package)\n\(toolchain)\n")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: package)) ?? [])
            .filter { ($0.hasPrefix("Package") && $0.hasSuffix(".swift")) || $0 == "Package.resolved" }.sorted()
        for name in names { hash.update("\(name)\u{0}\(try FileDigest.of(package + "/" + name))\n") }
        let key = hash.hex()
        if entries.graphKey == key, let known = entries.graph { return Data(known.utf8) }
        let json = try await ask()
        entries.graphKey = key
        entries.graph = String(decoding: json, as: UTF8.self)
        dirty = true
        return json
    }

    /// Writes the answers back when they changed; a cache that cannot be written only costs the next run time.
    func save() {
        guard dirty, let data = try? JSONEncoder().encode(entries) else { return }
        try? FileManager.default.createDirectory(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path,
                                                 withIntermediateDirectories: true)
        try? data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
