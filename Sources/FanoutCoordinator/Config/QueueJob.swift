import FanoutCore

/// Queue mode: which build's shared queue this job joins, and as which worker. The build id and the worker come from
/// the flags, else `FANOUT_BUILD_ID` / `FANOUT_WORKER`, else the CI system's own variables; the queue's address from
/// `--queue` or `queue:` in fanout.yml (its password from PGPASSWORD or PGPASSFILE, never from either).
public struct QueueJob: Sendable, Hashable {
    /// The queue's URL (postgres://USER@HOST:PORT/DATABASE).
    public var url: String
    /// Every job of one CI build gives the same id; a retried job keeps it.
    public var build: String
    /// This job's name within the build: stable across the CI's retries of the job (its index).
    public var worker: String
    /// Seconds a reservation lasts unless renewed (renewed every third of it).
    public var lease: Double = 30
    /// Seconds to wait for the job that seeds the build.
    public var seedWait: Double = 120
    /// Seconds a build's rows are kept.
    public var expiresAfter: Double = 86_400
    /// How many failed items the build may queue again for another job, in all (`queue: requeue_budget`; by default
    /// one for every 20 items, at least one), each test at most `--retries` times.
    public var requeueBudget: Int?
    /// What a CI retry of this job re-runs of its first share: only the items it failed (`--retry-failures`), or all.
    public var retryFailures = false
    /// The static shard this job runs when the queue cannot be reached at the start (`--shard`, FANOUT_SHARD, or the
    /// CI's parallel-job variables); none: such a job fails (exit 3) rather than run tests another job also runs.
    public var fallbackShard: Shard?

    public init(url: String, build: String, worker: String) {
        self.url = url
        self.build = build
        self.worker = worker
    }

    /// The job's identity from the flags and the environment. Nil without a queue URL (not queue mode), and nil when
    /// the URL comes from fanout.yml alone and no build id is known (a run from a terminal, outside CI): the same
    /// fanout.yml serves CI jobs, in queue mode, and people, in ordinary runs. `--queue` on the command line always
    /// means queue mode, and then a missing build id is an error.
    public static func resolve(url: String?, buildID: String?, worker: String?, environment: [String: String],
                               configured: QueueJob? = nil) throws(FanoutError) -> QueueJob? {
        let fromFlag = url
        guard let url = url ?? configured?.url else {
            if buildID != nil || worker != nil {
                throw FanoutError("--build-id and --worker are for queue mode, and no queue was given",
                                  hint: "Add --queue postgres://USER@HOST:PORT/DATABASE, or `queue:` in fanout.yml.")
            }
            return nil
        }
        let env = environment.filter { !$0.value.isEmpty }
        let knownBuild = Self.buildID(flag: buildID, environment: env)
        if knownBuild == nil, fromFlag == nil, worker == nil { return nil }
        guard let build = knownBuild else {
            throw FanoutError("queue mode needs the id of the CI build this job belongs to, and none was found",
                              hint: "Pass --build-id (the same for every job of the build), or set FANOUT_BUILD_ID. GitHub "
                                + "Actions, GitLab, Buildkite, CircleCI and Jenkins give one by themselves.")
        }
        guard let name = worker ?? env["FANOUT_WORKER"] ?? Self.ciWorker(env) else {
            throw FanoutError("queue mode needs this job's name within its build (its index), and none was found",
                              hint: "Pass --worker (on GitHub Actions: --worker ${{ strategy.job-index }}), or set FANOUT_WORKER; "
                                + "GitLab's parallel:, Buildkite's parallelism and CircleCI's parallelism give one by themselves.")
        }
        var job = configured ?? QueueJob(url: url, build: build, worker: name)
        job.url = url
        job.build = build
        job.worker = name
        return job
    }

    /// The build's id: the flag, else FANOUT_BUILD_ID, else the CI system's.
    public static func buildID(flag: String?, environment: [String: String]) -> String? {
        let env = environment.filter { !$0.value.isEmpty }
        return flag ?? env["FANOUT_BUILD_ID"] ?? ciBuild(env)
    }

    /// The build's id as the CI system names it (the repository's, so that two projects sharing a server never meet).
    static func ciBuild(_ env: [String: String]) -> String? {
        if let run = env["GITHUB_RUN_ID"] { return "github:\(env["GITHUB_REPOSITORY"] ?? "?"):\(run)" }
        if let pipeline = env["CI_PIPELINE_ID"] { return "gitlab:\(env["CI_PROJECT_PATH"] ?? "?"):\(pipeline)" }
        if let build = env["BUILDKITE_BUILD_ID"] { return "buildkite:\(build)" }
        if let workflow = env["CIRCLE_WORKFLOW_ID"] { return "circleci:\(workflow)" }
        if let tag = env["BUILD_TAG"], env["JENKINS_URL"] != nil { return "jenkins:\(tag)" }
        return nil
    }

    /// This job's index as the CI system gives it to parallel jobs.
    static func ciWorker(_ env: [String: String]) -> String? {
        env["CI_NODE_INDEX"] ?? env["BUILDKITE_PARALLEL_JOB"] ?? env["CIRCLE_NODE_INDEX"]
    }
}
