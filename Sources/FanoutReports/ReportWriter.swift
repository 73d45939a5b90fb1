import FanoutCore
import Foundation

/// Writes the file formats of a run into one directory: `report.json`, `junit.xml`, `summary.md` (Markdown for a
/// CI job summary) and `report.html` (one self-contained page to open in a browser).
/// The console summary is not a file; render it with `ConsoleSummary`.
public struct ReportWriter: Sendable {
    public var json: JSONReportWriter
    public var junit: JUnitWriter
    public var markdown: MarkdownWriter
    public var html: HTMLWriter

    public init(json: JSONReportWriter = JSONReportWriter(), junit: JUnitWriter = JUnitWriter(),
                markdown: MarkdownWriter = MarkdownWriter(), html: HTMLWriter = HTMLWriter()) {
        self.json = json
        self.junit = junit
        self.markdown = markdown
        self.html = html
    }

    /// `<root>/<run id>`, relative to the current directory unless `root` is absolute. A run id is used as one path
    /// component: separators in it are replaced so it cannot point elsewhere.
    public static func defaultDirectory(root: String = ".fanout/reports", runID: String) -> URL {
        var component = runID.replacingOccurrences(of: "/", with: "-")
        if component.isEmpty || component == "." || component == ".." { component = "run" }
        return URL(fileURLWithPath: root, isDirectory: true).appendingPathComponent(component, isDirectory: true)
    }

    /// Writes every file format into `directory` (created with its parents when missing), each file replaced
    /// atomically so a reader never sees half a report.
    /// - Returns: the files written, `report.json` first.
    @discardableResult
    public func write(_ report: RunReport, to directory: URL) throws(ReportWriterError) -> [URL] {
        try writeTimed(report, to: directory).files
    }

    /// What ``writeTimed(_:to:)`` wrote, and how long each file took to render and write (the files are rendered
    /// at once, so these overlap), named by file, in the order of `files`.
    public struct Written: Sendable {
        public var files: [URL]
        public var formats: [PhaseTime]
    }

    /// ``write(_:to:)``, timing each file.
    public func writeTimed(_ report: RunReport, to directory: URL) throws(ReportWriterError) -> Written {
        try Self.prepare(directory)
        // The formats are independent renderings of one value, and on a large run (100,000 tests) each takes a
        // noticeable fraction of a second: they are rendered at once, report.json itself in pieces (the largest).
        let json = self.json.encoding(report)
        let (junit, markdown, html) = (self.junit, self.markdown, self.html)
        // The single largest job (junit.xml) starts first and report.json's small slices fill in around it.
        let jobs: [@Sendable () throws -> Data] = [
            { junit.encode(report) }, { Data(html.render(report).utf8) }, { Data(markdown.render(report).utf8) },
        ] + json.pieces
        let clock = ContinuousClock()
        let begun = clock.now
        // Each job's result, and when it started and ended (seconds after `begun`).
        let done = Parallel.map(jobs) { job in
            let start = clock.now
            let result = Result { try job() }
            return (result, (start - begun).seconds, (clock.now - begun).seconds)
        }
        let jsonURL = directory.appendingPathComponent(JSONReportWriter.fileName)
        var files: [(url: URL, data: Data, seconds: Double)] = []
        do {
            let start = clock.now
            let pieces = done.suffix(json.pieces.count)
            let data = try json.assemble(try pieces.map { try $0.0.get() })
            // Its pieces render at once: from the first one's start to the last one's end, then joining them.
            let rendering = (pieces.map(\.2).max() ?? 0) - (pieces.map(\.1).min() ?? 0)
            files.append((jsonURL, data, rendering + (clock.now - start).seconds))
        } catch {
            throw ReportWriterError(path: jsonURL.path, problem: .encoding("\(error)"))
        }
        // junit.xml, summary.md, report.html: the documented order (jobs 0, 2, 1 above).
        for (job, name) in [(0, JUnitWriter.fileName), (2, MarkdownWriter.fileName), (1, HTMLWriter.fileName)] {
            let url = directory.appendingPathComponent(name)
            do {
                files.append((url, try done[job].0.get(), done[job].2 - done[job].1))
            } catch {
                throw ReportWriterError(path: url.path, problem: .encoding("\(error)"))
            }
        }
        var formats: [PhaseTime] = []
        for file in files {
            let start = clock.now
            do {
                try file.data.write(to: file.url, options: .atomic)
            } catch {
                throw ReportWriterError(path: file.url.path, problem: Self.problem(at: file.url.path, error: error))
            }
            formats.append(PhaseTime(file.url.lastPathComponent, seconds: file.seconds + (clock.now - start).seconds))
        }
        return Written(files: files.map(\.url), formats: formats)
    }

    /// Creates the directory, or says precisely why it cannot be used.
    private static func prepare(_ directory: URL) throws(ReportWriterError) {
        let fm = FileManager.default
        let path = directory.path
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw ReportWriterError(path: path, problem: .notADirectory(path)) }
            guard fm.isWritableFile(atPath: path) else {
                throw ReportWriterError(path: path, problem: .permissionDenied(path))
            }
            return
        }
        // The nearest existing ancestor is where creation fails; naming it tells the user what to fix.
        var ancestor = directory.deletingLastPathComponent()
        while !fm.fileExists(atPath: ancestor.path, isDirectory: &isDirectory), ancestor.path != "/" {
            ancestor = ancestor.deletingLastPathComponent()
        }
        if fm.fileExists(atPath: ancestor.path, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw ReportWriterError(path: path, problem: .notADirectory(ancestor.path))
        }
        do {
            try fm.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw ReportWriterError(path: path, problem: problem(at: ancestor.path, error: error))
        }
    }

    private static func problem(at path: String, error: any Error) -> ReportWriterError.Problem {
        let ns = error as NSError
        let posix = (ns.userInfo[NSUnderlyingErrorKey] as? NSError).flatMap {
            $0.domain == NSPOSIXErrorDomain ? Int32($0.code) : nil
        }
        switch posix {
        case EACCES, EPERM: return .permissionDenied(path)
        case EROFS: return .readOnlyFileSystem(path)
        case ENOSPC, EDQUOT: return .noSpace(path)
        default:
            if ns.domain == NSCocoaErrorDomain, ns.code == NSFileWriteNoPermissionError {
                return .permissionDenied(path)
            }
            return .other(JSONReportWriter.describeIOError(error))
        }
    }
}
