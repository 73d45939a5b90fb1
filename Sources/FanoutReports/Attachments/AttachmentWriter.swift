import FanoutCore
import Foundation

/// Keeps the files tests attached (a UI test's failure screenshot) in the report folder, beside the report that
/// links them: `attachments/<destination>/<Module.Class>/<test>/unit<N>-<name>`.
public struct AttachmentWriter: Sendable {
    public let directory: URL

    public init(directory: URL) { self.directory = directory }

    /// Writes one unit's files and returns their paths relative to the report folder, by test; `skipped` says, for
    /// each file that could not be written, why (it is left out).
    public func save(_ files: [TestID: [AttachedFile]], destination: String,
                     unit: Int) -> (paths: [TestID: [String]], skipped: [String]) {
        var paths: [TestID: [String]] = [:]
        var skipped: [String] = []
        // Screenshots often share a name (`Failure screenshot`), and two tests' names may clean up to one folder:
        // a path already taken gets `-2`, and so on.
        var used: Set<String> = []
        for (id, list) in files.sorted(by: { $0.key < $1.key }) {
            let folder = ["attachments", destination, id.suite.description, id.name].map(AttachedFile.safeName)
                .joined(separator: "/")
            for file in list {
                var name = file.name
                var n = 1
                while !used.insert(folder + "/" + name).inserted {
                    n += 1
                    let dot = file.name.lastIndex(of: ".") ?? file.name.endIndex
                    name = file.name[..<dot] + "-\(n)" + file.name[dot...]
                }
                let relative = folder + "/unit\(unit)-" + name
                let url = directory.appendingPathComponent(relative)
                do {
                    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                    try Data(file.bytes).write(to: url)
                    paths[id, default: []].append(relative)
                } catch {
                    skipped.append("attachment \(file.name) of \(id) not kept: \(error.localizedDescription)")
                }
            }
        }
        return (paths, skipped)
    }
}
