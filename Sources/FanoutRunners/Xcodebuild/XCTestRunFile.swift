import FanoutCore
import Foundation

/// An `.xctestrun` file, the plist `xcodebuild build-for-testing` writes beside the built products: which test
/// targets there are and where their bundles, host apps and UI-test target apps live. Paths in it start with
/// `__TESTROOT__` (the file's own folder), so the file and the folders it names travel together; xcodebuild
/// resolves them on the agent. Format versions 1 (targets at the top level) and 2 (`TestConfigurations`) are read.
public struct XCTestRunFile: Sendable, Hashable {
    /// The test targets (the modules of the suites), in the file's order.
    public var targets: [String]
    /// The top-level entries of the product folder the file refers to (`Debug-iphonesimulator`): what agents need.
    public var folders: [String]
    /// `FormatVersion` of `__xctestrun_metadata__`.
    public var formatVersion: Int

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    public static func parse(_ data: Data) throws(Failure) -> XCTestRunFile {
        let plist = try propertyList(data)
        guard let root = plist as? [String: Any] else { throw Failure(reason: "not a dictionary at the top") }
        let version = ((root["__xctestrun_metadata__"] as? [String: Any])?["FormatVersion"] as? Int) ?? 1
        var targets: [(name: String, values: [String: Any])] = []
        // Sets beside the lists: searching the lists made a file of many targets quadratic.
        var names: Set<String> = []
        if let configurations = root["TestConfigurations"] as? [[String: Any]] {
            for configuration in configurations {
                for target in configuration["TestTargets"] as? [[String: Any]] ?? [] {
                    guard let name = target["BlueprintName"] as? String ?? target["ProductModuleName"] as? String else { continue }
                    if names.insert(name).inserted { targets.append((name, target)) }
                }
            }
        } else {
            for key in root.keys.sorted() where !key.hasPrefix("__") {
                if let target = root[key] as? [String: Any] { targets.append((key, target)) }
            }
        }
        guard !targets.isEmpty else { throw Failure(reason: "it names no test target") }
        var folders: Set<String> = []
        func note(_ value: Any) {
            if let s = value as? String {
                // `DYLD_FRAMEWORK_PATH` and the like are lists: `__TESTROOT__/Debug:__PLATFORMS__/…`.
                for piece in s.split(separator: ":") {
                    if let rest = piece.dropPrefix("__TESTROOT__/"),
                       let first = rest.split(separator: "/").first.map(String.init), !first.isEmpty, first != ".." {
                        folders.insert(first)
                    }
                }
            } else if let list = value as? [Any] {
                list.forEach(note)
            } else if let map = value as? [String: Any] {
                map.values.forEach(note)
            }
        }
        for (_, values) in targets { note(values) }
        return XCTestRunFile(targets: targets.map(\.name), folders: folders.sorted(), formatVersion: version)
    }

    /// The file with every absolute path into `productFolder` made relative to `__TESTROOT__` (a file written by a
    /// tool other than xcodebuild, or edited by hand), so it works wherever the folder is unpacked; nil when no
    /// path needed it. Written as an XML plist.
    public static func relocated(_ data: Data, productFolder: String) throws(Failure) -> Data? {
        let plist = try propertyList(data)
        let folder = productFolder.hasSuffix("/") ? productFolder : productFolder + "/"
        var changed = false
        func rewrite(_ value: Any) -> Any {
            if let s = value as? String {
                // Each piece of a `:` list on its own (`/…/Products/Debug:__PLATFORMS__/…`).
                let pieces = s.split(separator: ":", omittingEmptySubsequences: false).map { piece -> Substring in
                    guard piece.hasPrefix(folder) else { return piece }
                    changed = true
                    return "__TESTROOT__/" + piece.dropFirst(folder.count)
                }
                return pieces.joined(separator: ":")
            }
            if let list = value as? [Any] { return list.map(rewrite) }
            if let map = value as? [String: Any] { return map.mapValues(rewrite) }
            return value
        }
        let result = rewrite(plist)
        guard changed else { return nil }
        do {
            return try PropertyListSerialization.data(fromPropertyList: result, format: .xml, options: 0)
        } catch {
            throw Failure(reason: "cannot write the relocated file (\(error.localizedDescription))")
        }
    }

    private static func propertyList(_ data: Data) throws(Failure) -> Any {
        guard !holdsSet(data) else { throw Failure(reason: "a binary property list holding a set, which no .xctestrun does") }
        do {
            return try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw Failure(reason: "not a property list (\(error.localizedDescription))")
        }
    }

    /// Whether `data` is a binary property list with a set among its objects. Foundation on Linux traps, instead of
    /// throwing, when it bridges a set of arrays or dictionaries (Swift 6.3), and a set is one flipped bit away from
    /// an array: the objects are looked at first, each one's kind in the high half of its first byte (`0xC_`: a set).
    static func holdsSet(_ data: Data) -> Bool {
        let bytes = [UInt8](data)
        guard bytes.count >= 40, bytes.starts(with: Array("bplist".utf8)) else { return false }
        func integer(at offset: Int, size: Int) -> Int? {
            guard (1...8).contains(size), offset >= 0, offset <= bytes.count - size else { return nil }
            var value = 0
            for b in bytes[offset..<(offset + size)] { value = value << 8 | Int(b) }
            return value
        }
        // The trailer: offset size, reference size, object count, top object, offset table's start.
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        guard let count = integer(at: trailer + 8, size: 8), let table = integer(at: trailer + 24, size: 8),
              count >= 0, count <= bytes.count, table >= 0, table <= bytes.count else { return false }
        for i in 0..<count {
            guard let offset = integer(at: table + i * offsetSize, size: offsetSize) else { return false }
            if offset >= 0, offset < bytes.count, bytes[offset] >> 4 == 0xC { return true }
        }
        return false
    }
}
