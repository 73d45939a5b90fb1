import ArgumentParser
import FanoutCoordinator
import FanoutReports
import Foundation

struct QueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue", abstract: "Queue mode's build-wide steps (docs/queue-mode.md).",
        subcommands: [Report.self])

    struct Report: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Wait until a queue-mode build is drained, then write its merged report and record it in the history.",
            discussion: """
            Run it as a CI step after the jobs (or in the last job). It waits until every item of the build is done \
            (or --wait passes) and every live job has sent its report, then writes report.json, junit.xml, summary.md \
            and report.html into --out: every test of the build once, with the attempts of every job that ran it (a \
            failure queued again that then passed is flaky). The merged run is recorded in the timing history \
            (--history; --no-record to skip), for the next build's plan. Exit codes: 0 all passed · 1 test \
            failures · 3 tests no job completed (listed), or the queue could not be read · 2 bad input.
            """)

        @Option(help: ArgumentHelp("The queue (default: `queue: url` in fanout.yml).", valueName: "postgres://USER@HOST:PORT/DATABASE"))
        var queue: String?

        @Option(help: ArgumentHelp("The build's id, as its jobs gave it (default: $FANOUT_BUILD_ID, or the CI's own).", valueName: "id"))
        var buildId: String?

        @Option(help: "Seconds to wait for the build to be drained and its jobs to report.")
        var wait: Double = 3600

        @Option(help: "The folder to write the merged report into (default: .fanout/reports/queue-<build>).")
        var out: String?

        @Option(help: "The config file (default: ./fanout.yml when it exists).")
        var config: String?

        @Option(help: "The timing history to record the merged run in (default: .fanout/history.sqlite, or history: in fanout.yml).")
        var history: String?

        @Flag(help: "Do not record the merged run in the timing history.")
        var noRecord = false

        mutating func run() async throws {
            let settings = try CommonOptions.fileSettings(config: config)
            guard let url = queue ?? settings.configuredQueue?.url else {
                throw FanoutError("no queue given", hint: "Pass --queue postgres://USER@HOST:PORT/DATABASE, or add `queue: url:` to fanout.yml.")
            }
            guard wait >= 0 else { throw FanoutError("--wait must be 0 or more seconds", hint: "--wait 1800 waits half an hour.") }
            let environment = ProcessInfo.processInfo.environment
            guard let build = QueueJob.buildID(flag: buildId, environment: environment) else {
                throw FanoutError("the build's id is not known here",
                                  hint: "Pass --build-id (as the jobs did), or set FANOUT_BUILD_ID; GitHub Actions, GitLab, "
                                    + "Buildkite, CircleCI and Jenkins give one by themselves.")
            }
            var step = QueueReportStep(url: url, build: build, wait: wait,
                                       directory: out ?? settings.reportRoot + "/queue-" + build.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" },
                                       historyPath: noRecord ? nil : history ?? settings.historyPath)
            step.alive = 2 * (settings.configuredQueue?.lease ?? 30)
            let outcome = try await step.run { Terminal.err("fanout: \($0)") }
            print(ConsoleSummary(color: false).render(outcome.report))
            for line in outcome.missing.prefix(50) { print("never completed: \(line)") }
            if outcome.missing.count > 50 { print("never completed: and \(outcome.missing.count - 50) more (report.json lists them all)") }
            print("Merged report of build \(build): \(step.directory)/report.json, junit.xml, summary.md and report.html (exit \(outcome.exitCode))")
            throw ExitCode(outcome.exitCode)
        }
    }
}
