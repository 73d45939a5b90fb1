import FanoutCore
import FanoutReports
import Foundation

/// What a CI job shows of a run on GitHub Actions: the Markdown summary (summary.md, written beside report.json)
/// appended to the job's step summary, and error annotations on the failing lines.
public enum JobSummary {
    /// Appends the summary.md just written (the same bytes, not rendered again) to the file GitHub Actions names in
    /// `GITHUB_STEP_SUMMARY`, when it does. Returns a warning when that fails (the run's verdict never depends on it).
    static func publish(from files: [URL], environment: [String: String]) -> String? {
        guard let path = environment["GITHUB_STEP_SUMMARY"], !path.isEmpty,
              let summary = files.first(where: { $0.lastPathComponent == MarkdownWriter.fileName }) else { return nil }
        guard let text = try? Data(contentsOf: summary) else {
            return "the job summary could not be written to GITHUB_STEP_SUMMARY: \(summary.path) cannot be read"
        }
        guard let handle = FileHandle(forWritingAtPath: path) else {
            return "the job summary could not be written to GITHUB_STEP_SUMMARY (\(path)): it cannot be opened for writing"
        }
        defer { try? handle.close() }
        do {
            try handle.seekToEnd()
            try handle.write(contentsOf: text)
        } catch {
            return "the job summary could not be written to GITHUB_STEP_SUMMARY (\(path)): \(error.localizedDescription)"
        }
        return nil
    }

    /// `::error file=…,line=…::…` lines for the first failures when running on GitHub Actions (`GITHUB_ACTIONS=true`),
    /// paths relative to `GITHUB_WORKSPACE`; none elsewhere.
    public static func annotations(_ report: RunReport, environment: [String: String]) -> [String] {
        guard environment["GITHUB_ACTIONS"] == "true" else { return [] }
        return GitHubAnnotations.errors(report, workspace: environment["GITHUB_WORKSPACE"])
    }
}
