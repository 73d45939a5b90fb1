import FanoutCore
import Foundation
import FanoutReports

/// `fanout report merge`: the report.json files of a run's shards read, merged into one report, and written in
/// every format.
public enum ReportMergeStep {
    /// Merges the report.json files (or folders holding one) of a run's shards and writes the merged report into
    /// `directory` in every format. Returns the merged report's exit code and why it cannot be trusted, if so.
    public static func merge(_ paths: [String], into directory: String) throws(FanoutError) -> (exitCode: Int32, problems: [String]) {
        guard !paths.isEmpty else {
            throw FanoutError("nothing to merge", hint: "Give the report.json of every shard, or the folders that hold them.")
        }
        let files = paths.map { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
                ? path + "/report.json" : path
        }
        // Decoding dominates merging the shards of a large suite: the files are decoded at once.
        var reports: [RunReport] = []
        for read in Parallel.map(files, { file in
            Result { () throws(ReportDecodingError) in try JSONReportReader().read(from: URL(fileURLWithPath: file)) }
        }) {
            reports.append(try read.mapError(FanoutError.init(unreadableReport:)).get())
        }
        let merged = ReportMerger.merge(reports)
        do {
            try ReportWriter().write(merged.report, to: URL(fileURLWithPath: directory, isDirectory: true))
        } catch {
            throw FanoutError("\(error)", hint: "Choose another folder with --out.")
        }
        return (merged.report.exitCode, merged.problems)
    }
}
