import FanoutCoordinator
import FanoutCore
import Testing

/// Queue mode's identity of a job: the build id and the worker from flags, FANOUT_*, or each CI's own variables.
@Suite struct QueueJobTests {
    let url = "postgres://fanout@db:5432/fanout"

    func resolve(url: String? = nil, build: String? = nil, worker: String? = nil, _ env: [String: String],
                 configured: QueueJob? = nil) throws -> QueueJob? {
        try QueueJob.resolve(url: url, buildID: build, worker: worker, environment: env, configured: configured)
    }

    @Test(arguments: [
        (["GITHUB_RUN_ID": "77", "GITHUB_REPOSITORY": "org/app", "FANOUT_WORKER": "2"], "github:org/app:77", "2"),
        (["CI_PIPELINE_ID": "900", "CI_PROJECT_PATH": "org/app", "CI_NODE_INDEX": "3"], "gitlab:org/app:900", "3"),
        (["BUILDKITE_BUILD_ID": "b-1", "BUILDKITE_PARALLEL_JOB": "0"], "buildkite:b-1", "0"),
        (["CIRCLE_WORKFLOW_ID": "w-9", "CIRCLE_NODE_INDEX": "4"], "circleci:w-9", "4"),
        (["BUILD_TAG": "jenkins-app-12", "JENKINS_URL": "https://ci", "FANOUT_WORKER": "a"], "jenkins:jenkins-app-12", "a"),
        (["FANOUT_BUILD_ID": "mine", "FANOUT_WORKER": "w", "GITHUB_RUN_ID": "1"], "mine", "w"),
    ])
    func eachCIsVariablesNameTheBuildAndTheWorker(env: [String: String], build: String, worker: String) throws {
        let job = try #require(try resolve(url: url, env))
        #expect(job.build == build && job.worker == worker && job.url == url)
    }

    @Test func flagsComeFirstAndConfiguredTimingsStay() throws {
        var configured = QueueJob(url: "postgres://u@configured/db", build: "", worker: "")
        configured.lease = 9
        let job = try #require(try resolve(build: "b", worker: "w", ["CI_PIPELINE_ID": "1", "CI_NODE_INDEX": "2"],
                                           configured: configured))
        #expect(job.build == "b" && job.worker == "w" && job.url == "postgres://u@configured/db" && job.lease == 9)
    }

    @Test func aQueueOnlyInTheConfigIsAnOrdinaryRunOutsideCI() throws {
        let configured = QueueJob(url: url, build: "", worker: "")
        #expect(try resolve([:], configured: configured) == nil)
        #expect(try resolve([:]) == nil, "no queue at all")
    }

    @Test func whatIsMissingIsSaidWithWhereToGiveIt() {
        #expect {
            try resolve(url: url, [:])
        } throws: { "\($0)".contains("--build-id") }
        #expect {
            try resolve(url: url, ["GITHUB_RUN_ID": "5", "GITHUB_REPOSITORY": "o/r"])
        } throws: { "\($0)".contains("strategy.job-index") }
        #expect {
            try resolve(build: "b", [:])
        } throws: { "\($0)".contains("no queue was given") }
    }

    @Test func queueModeRefusesShardsAndRepeats() {
        var s = RunSettings()
        s.queue = QueueJob(url: url, build: "b", worker: "w")
        s.shard = Shard(parsing: "1/2")
        #expect { try s.validate() } throws: { "\($0)".contains("--shard and --queue") }
        s.shard = nil
        s.repeatCount = 5
        #expect { try s.validate() } throws: { "\($0)".contains("--repeat") }
        s.repeatCount = 1
        s.queue?.lease = 1
        #expect { try s.validate() } throws: { "\($0)".contains("lease") }
    }
}
