import FanoutCore

/// Which shard this job runs, from the flag or the CI system's environment.
public enum ShardSelection {
    /// `--shard I/N` first, then `FANOUT_SHARD=I/N`, then GitLab's `parallel:` (`CI_NODE_INDEX` counts from 1,
    /// `CI_NODE_TOTAL`), then Buildkite's parallelism (`BUILDKITE_PARALLEL_JOB` counts from 0,
    /// `BUILDKITE_PARALLEL_JOB_COUNT`). Nil when none is set: the run is not sharded. A variable set to the empty
    /// string counts as unset, for each of them alike (a CI template that exports `CI_NODE_INDEX=` outside
    /// `parallel:` runs the whole suite, as `FANOUT_SHARD=` does).
    public static func resolve(flag: String?, environment: [String: String]) throws(FanoutError) -> Shard? {
        let env = environment.filter { !$0.value.isEmpty }
        if let flag { return try parse(flag, from: "--shard") }
        if let value = env["FANOUT_SHARD"] { return try parse(value, from: "FANOUT_SHARD") }
        if let index = env["CI_NODE_INDEX"], let total = env["CI_NODE_TOTAL"] {
            return try parse("\(index)/\(total)", from: "CI_NODE_INDEX/CI_NODE_TOTAL (GitLab parallel:)")
        }
        if let job = env["BUILDKITE_PARALLEL_JOB"], let count = env["BUILDKITE_PARALLEL_JOB_COUNT"] {
            guard let j = Int(job) else {
                throw FanoutError("BUILDKITE_PARALLEL_JOB must be a number (got '\(job)')", hint: "Buildkite sets it with `parallelism:`.")
            }
            return try parse("\(j + 1)/\(count)", from: "BUILDKITE_PARALLEL_JOB/_COUNT (Buildkite parallelism)")
        }
        return nil
    }

    static func parse(_ text: String, from source: String) throws(FanoutError) -> Shard {
        guard let shard = Shard(parsing: text) else {
            throw FanoutError("\(source) must be I/N with 1 ≤ I ≤ N (got '\(text)')",
                              hint: "For 4 CI jobs, job 1 runs --shard 1/4, job 2 --shard 2/4, and so on.")
        }
        return shard
    }
}
