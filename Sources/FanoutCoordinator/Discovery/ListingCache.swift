import FanoutCore
import Foundation
import Synchronization

/// A product's test listings, remembered between runs (`listing-cache.json` beside the history): listing starts the
/// binary, which instantiates every XCTestCase (a tenth of a second for 3,000 tests, more for Swift Testing suites
/// of real packages), and the answer depends only on the files listed.
///
/// An answer is used only while what it came from is unchanged: the binary and every shared library beside it (Swift
/// Testing finds tests in the libraries a product loads), each by device, inode, size, modification and status-change
/// times (any write, copy or restore changes the last; hashing the binary would cost as much as listing it), and the
/// exact command and environment it was listed with. Only XCTest and Swift Testing listings of a local product are
/// kept, and only listings that succeeded.
final class ListingCache: Sendable {
    /// Slots kept (the newest): a few products, destinations and frameworks.
    static let capacity = 16
    static let fileName = "listing-cache.json"

    /// What a listing is of (the framework, the binary's path, the command and its environment: `slot`) and the
    /// state of the files it came from (`state`). A slot holds one listing, the newest: every rebuild makes a new
    /// state, and keeping the old ones would fill the file with listings nothing can use again.
    struct Key: Hashable, Codable {
        var slot: String
        var state: String
    }

    struct Entry: Codable {
        var key: Key
        var listing: String
    }

    let path: String
    private let state: Mutex<(entries: [Entry], dirty: Bool)>

    init(historyPath: String) {
        path = URL(fileURLWithPath: historyPath).deletingLastPathComponent().appendingPathComponent(Self.fileName).path
        let entries = FileManager.default.contents(atPath: path).flatMap { try? JSONDecoder().decode([Entry].self, from: $0) }
        state = Mutex((entries ?? [], false))
    }

    /// The key of listing `binary` with `command`, or nil when a file it depends on cannot be read (then nothing is
    /// remembered).
    static func key(framework: Framework, binary: String, command: Command) -> Key? {
        guard framework == .xctest || framework == .swiftTesting, let binaryState = FileState.key(binary) else { return nil }
        var slot = SHA256()
        slot.update("\(framework.rawValue)\n\(URL(fileURLWithPath: binary).resolvingSymlinksInPath().path)\n")
        slot.update(([command.executable] + command.arguments).joined(separator: "\u{0}") + "\n")
        for (name, value) in command.environment.sorted(by: { $0.key < $1.key }) { slot.update("\(name)=\(value)\u{0}") }
        var state = SHA256()
        state.update(binaryState)
        let folder = URL(fileURLWithPath: binary).deletingLastPathComponent().path
        let libraries = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { $0.hasSuffix(".so") || $0.contains(".so.") || $0.hasSuffix(".dylib") }.sorted()
        for library in libraries {
            guard let key = FileState.key(folder + "/" + library) else { return nil }
            state.update("\n\(key)")
        }
        return Key(slot: slot.hex(), state: state.hex())
    }

    /// Listings held (for tests).
    var count: Int { state.withLock { $0.entries.count } }

    func listing(for key: Key) -> String? {
        state.withLock { s in s.entries.last { $0.key == key }?.listing }
    }

    func remember(_ listing: String, for key: Key) {
        state.withLock { s in
            s.entries.removeAll { $0.key.slot == key.slot }
            s.entries.append(Entry(key: key, listing: listing))
            if s.entries.count > Self.capacity { s.entries.removeFirst(s.entries.count - Self.capacity) }
            s.dirty = true
        }
    }

    /// Writes the entries back when they changed; a cache that cannot be written only costs the next run time.
    func save() {
        let data: Data? = state.withLock { s in
            guard s.dirty else { return nil }
            s.dirty = false
            return try? JSONEncoder().encode(s.entries)
        }
        guard let data else { return }
        try? FileManager.default.createDirectory(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path,
                                                 withIntermediateDirectories: true)
        try? data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
