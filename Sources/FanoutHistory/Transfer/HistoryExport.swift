import FanoutCore
import Foundation

/// A portable copy of a timing history: the file `fanout history export` writes and `fanout history import` reads,
/// so the history can travel between CI runs and between the shard jobs of one pipeline as a build artifact.
///
/// JSON, documented in docs/history-format.md. `format` says what the file is and `version` how to read it: a reader
/// refuses a file whose version it does not know instead of half-reading it, and every Fanout keeps reading every
/// older version. The store's SQLite file itself is not portable in that sense: its schema migrates in place, and a
/// file from a newer Fanout cannot be opened by an older one.
public struct HistoryExport: Codable, Sendable, Hashable {
    /// The value of `format` in every export.
    public static let formatName = "fanout-history"
    /// The version this Fanout writes, and the newest it reads.
    public static let currentVersion = 1

    public var format: String
    public var version: Int
    public var exportedAt: Date
    /// The Fanout that wrote the file.
    public var fanoutVersion: String
    /// Oldest first.
    public var runs: [HistoryRun]
    /// Selective testing's verdicts on test targets (``TargetRun``), oldest first, so that CI jobs and branches share
    /// what fully passed. Absent in exports of a Fanout before selective testing: read as none.
    public var targets: [TargetRun]?

    public init(exportedAt: Date, fanoutVersion: String, runs: [HistoryRun], targets: [TargetRun]? = nil) {
        format = Self.formatName
        version = Self.currentVersion
        self.exportedAt = exportedAt
        self.fanoutVersion = fanoutVersion
        self.runs = runs
        self.targets = targets
    }

    // MARK: - Bytes

    /// Compact UTF-8 JSON (a history of 200 runs of a large suite is tens of MB; pretty printing would double it)
    /// with sorted keys, so two exports of the same history are byte-identical; ends with a newline.
    public func encoded() throws(HistoryFileError) -> Data {
        let encoder = JSONConventions.encoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            var data = try encoder.encode(self)
            data.append(0x0A)
            return data
        } catch {
            throw .invalid(path: "(export)", detail: "\(error)")
        }
    }

    /// Reads an export. The header (`format`, `version`) is checked before anything else, so a file of another kind
    /// or of a newer Fanout fails with that, not with whichever field happened to differ.
    /// - Parameter path: how to name the input in errors.
    public static func decode(_ data: Data, path: String) throws(HistoryFileError) -> HistoryExport {
        struct Header: Decodable {
            var format: String?
            var version: Int?
        }
        let header: Header
        do {
            header = try JSONDecoder().decode(Header.self, from: data)
        } catch DecodingError.dataCorrupted(let context) {
            if firstCharacter(of: data) == "<" {
                throw .notJSON(path: path, detail: "it is XML; JUnit files are imported with --junit")
            }
            throw .notJSON(path: path, detail: context.underlyingError.map { "\($0.localizedDescription)" }
                           ?? context.debugDescription)
        } catch {
            throw .notAnExport(path: path)
        }
        guard header.format == formatName, let version = header.version else {
            throw .notAnExport(path: path)
        }
        guard version <= currentVersion else {
            throw .newerVersion(path: path, found: version, supported: currentVersion)
        }
        guard version >= 1 else {
            throw .invalid(path: path, detail: "version: \(version) is not a version of the format")
        }
        let decoder = JSONConventions.decoder()
        do {
            return try decoder.decode(HistoryExport.self, from: data)
        } catch let error as DecodingError {
            throw .invalid(path: path, detail: JSONConventions.describe(error))
        } catch {
            throw .invalid(path: path, detail: "\(error)")
        }
    }

    // MARK: - Files

    /// Reads and decodes the export at `path`.
    public static func read(from path: String) throws(HistoryFileError) -> HistoryExport {
        try decode(readFile(path), path: path)
    }

    /// Writes the export to `path` in one step: a temporary file beside it, renamed over it, so a reader (or a CI
    /// cache upload racing the job) never sees half a file and a failed write leaves an earlier export intact.
    public func write(to path: String) throws(HistoryFileError) {
        let data = try encoded()
        do {
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw .cannotWrite(path: path, reason: JSONConventions.describeIOError(error))
        }
    }

    /// The bytes of a regular file, with errors that say which of "missing", "a folder" or "unreadable" it was.
    static func readFile(_ path: String) throws(HistoryFileError) -> Data {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw .unreadable(path: path, reason: "no such file")
        }
        guard !isFolder.boolValue else { throw .unreadable(path: path, reason: "it is a folder, not a file") }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadable(path: path, reason: JSONConventions.describeIOError(error))
        }
    }

    /// The first character after leading white space: `{` for JSON, `<` for XML; tells a file given to the wrong
    /// import apart from a broken one.
    static func firstCharacter(of data: Data) -> Character? {
        data.first { !Set(" \t\r\n".utf8).contains($0) }.map { Character(UnicodeScalar($0)) }
    }
}
