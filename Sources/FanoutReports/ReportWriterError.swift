/// Why the reports could not be written, with the path and the way out.
public struct ReportWriterError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Problem: Sendable, Hashable {
        /// The path holds a path component that is a file, not a directory.
        case notADirectory(String)
        case permissionDenied(String)
        case readOnlyFileSystem(String)
        case noSpace(String)
        /// The report could not be serialized (a bug: please report it).
        case encoding(String)
        case other(String)
    }

    /// The directory or file that could not be written.
    public var path: String
    public var problem: Problem

    public init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    public var description: String {
        let head = "cannot write reports to \(path)"
        switch problem {
        case .notADirectory(let file):
            return "\(head): \(file) is a file, not a directory. Move that file away, or choose another reports "
                + "directory."
        case .permissionDenied(let blocked):
            return "\(head): permission denied on \(blocked). Make it writable (chmod u+w \(blocked)) or choose a "
                + "reports directory you can write to."
        case .readOnlyFileSystem(let blocked):
            return "\(head): \(blocked) is on a read-only file system. Choose a reports directory on a writable disk."
        case .noSpace(let blocked):
            return "\(head): no space left on the device of \(blocked). Free some space or choose another disk."
        case .encoding(let detail):
            return "\(head): the report could not be encoded (\(detail)). This is a bug in fanout; please report it."
        case .other(let detail):
            return "\(head): \(detail). Check that the directory exists and is writable, or choose another one."
        }
    }
}
