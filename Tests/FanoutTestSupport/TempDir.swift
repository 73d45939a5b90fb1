import Foundation

/// The repository root (this file is Tests/FanoutTestSupport/TempDir.swift).
public let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// A fresh folder under the system's temporary folder, removed when the test ends.
public final class TempDir: Sendable {
    public let path: String

    public init() throws {
        path = NSTemporaryDirectory() + "fanout-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    public func file(_ name: String) -> String { path + "/" + name }

    /// The names in the folder, sorted.
    public func files() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: path).sorted() }
}
