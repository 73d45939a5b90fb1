import FanoutCore
import Foundation
import Testing
@testable import FanoutReports

@Suite(.timeLimit(.minutes(2))) struct ReportWriterTests {
    private func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("fanout-reports-\(UUID().uuidString)")
    }

    @Test func writesBothFilesIntoANewDirectory() throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("nested/run-1")
        let report = Sample.report()
        let files = try ReportWriter().write(report, to: directory)
        #expect(files.map(\.lastPathComponent) == ["report.json", "junit.xml", "summary.md", "report.html"])
        for file in files { #expect(FileManager.default.fileExists(atPath: file.path)) }
        #expect(try JSONReportReader().read(from: files[0]) == report)
        let junit = try String(contentsOf: files[1], encoding: .utf8)
        #expect(junit == JUnitWriter().render(report))
        let html = try String(contentsOf: files[3], encoding: .utf8)
        #expect(html == HTMLWriter().render(report))

        // Writing again replaces the files.
        var second = report
        second.runID = "second"
        try ReportWriter().write(second, to: directory)
        #expect(try JSONReportReader().read(from: files[0]).runID == "second")
    }

    @Test func aFileInTheWayIsReportedWithItsPath() throws {
        let root = temporaryDirectory()
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let blocker = root.appendingPathComponent("reports")
        try Data("not a directory".utf8).write(to: blocker)

        for target in [blocker, blocker.appendingPathComponent("run-1")] {
            let error = #expect(throws: ReportWriterError.self) {
                try ReportWriter().write(Sample.report(), to: target)
            }
            #expect(error?.problem == .notADirectory(blocker.path))
            #expect(error?.description.contains("cannot write reports to \(target.path)") == true)
            #expect(error?.description.contains("\(blocker.path) is a file, not a directory") == true)
        }
    }

    @Test func defaultDirectoryIsUnderTheRootNamedByRunID() {
        let url = ReportWriter.defaultDirectory(runID: "2024-05-01-120000-ab12")
        #expect(url.path.hasSuffix("/.fanout/reports/2024-05-01-120000-ab12"))
        #expect(ReportWriter.defaultDirectory(root: "/tmp/r", runID: "a/../b").path == "/tmp/r/a-..-b")
        #expect(ReportWriter.defaultDirectory(root: "/tmp/r", runID: "..").path == "/tmp/r/run")
    }
}
