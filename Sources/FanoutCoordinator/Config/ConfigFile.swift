import FanoutAgents
import FanoutCore
import Foundation
import Yams

/// Reads `fanout.yml` (documented in config/fanout.example.yml) into RunSettings.
///
/// Strict: an unknown key is an error (a typo must not silently fall back to a default), and every error names
/// the file, the line and the key. `${NAME}` in a string is replaced by the environment variable NAME.
public enum ConfigFile {
    public static let defaultName = "fanout.yml"

    /// Applies the file's settings on top of `settings`.
    public static func load(_ path: String, into settings: inout RunSettings,
                            environment: [String: String] = ProcessInfo.processInfo.environment) throws(FanoutError) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw FanoutError("cannot read the config file \(path): \(error.localizedDescription)",
                              hint: "Check the path given to --config.")
        }
        try parse(text, file: path, into: &settings, environment: environment)
    }

    public static func parse(_ text: String, file: String, into settings: inout RunSettings,
                             environment: [String: String] = [:]) throws(FanoutError) {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw FanoutError("\(file): not valid YAML: \(error)")
        } catch {
            throw FanoutError("\(file): not valid YAML: \(error)")
        }
        guard let root else { return } // an empty file changes nothing
        let top = ConfigNode(node: root, path: "", file: file, environment: environment)
        let keys = try top.mapping(allowed: ["package", "bundle", "build", "filter", "skip", "slots", "report_dir",
                                             "reports", "history", "record_history", "timeout", "estimate",
                                             "destination", "agents", "known_hosts", "ssh_config", "host_key_policy", "ssh", "retries", "bisect_budget",
                                             "requeue_budget", "keep_whole", "split_classes", "cpu_packing", "destinations",
                                             "exclusive", "not_exclusive", "performance", "baselines", "fail_on_perf_regression",
                                             "quarantine", "selective", "queue", "hooks"])
        if let v = keys["package"] { settings.packagePath = try v.string() }
        if let v = keys["bundle"] { settings.bundlePath = try v.string() }
        if let build = keys["build"] {
            let b = try build.mapping(allowed: ["configuration", "scratch_path", "flags"])
            if let v = b["configuration"] { settings.configuration = try v.oneOf(["debug", "release"]) }
            if let v = b["scratch_path"] { settings.scratchPath = try v.string() }
            if let v = b["flags"] { settings.buildFlags = try v.strings() }
        }
        if let v = keys["filter"] { settings.filters = try v.strings() }
        if let v = keys["skip"] { settings.skips = try v.strings() }
        if let v = keys["slots"] { settings.slots = try v.int(min: 1) }
        if let v = keys["report_dir"] { settings.reportDirectory = try v.string() }
        if let v = keys["reports"] { settings.reportRoot = try v.string() }
        if let v = keys["history"] { settings.historyPath = try v.string() }
        if let v = keys["record_history"] { settings.recordHistory = try v.bool() }
        if let timeout = keys["timeout"] { try timeLimits(timeout, into: &settings) }
        if let estimate = keys["estimate"] {
            let e = try estimate.mapping(allowed: ["percentile", "window", "overhead"])
            if let v = e["percentile"] { settings.percentile = try v.double(min: 1, max: 100) }
            if let v = e["window"] { settings.historyWindow = try v.int(min: 1) }
            if let v = e["overhead"] { settings.invocationOverhead = try v.double(min: 0) }
        }
        if let v = keys["keep_whole"] { settings.keepWhole = try v.strings() }
        if let v = keys["split_classes"] { settings.splitClasses = try v.bool() }
        if let v = keys["cpu_packing"] { settings.cpuPacking = try v.bool() }
        if let v = keys["retries"] { settings.retries = try v.int(min: 0) }
        if let v = keys["bisect_budget"] { settings.bisectBudget = try v.double(min: 0) }
        if let v = keys["requeue_budget"] { settings.requeueBudget = try v.int(min: 0) }
        try ssh(keys, into: &settings.ssh)
        if let v = keys["queue"] { settings.configuredQueue = try queue(v) }
        if let v = keys["agents"] { settings.agents = try agents(v) }
        if let v = keys["hooks"] { settings.hooks = try hooks(v) }
        if let v = keys["performance"] { settings.performance = try BaselineFile.parseRules(v) }
        if let v = keys["baselines"] { settings.baselinesPath = try v.string() }
        if let v = keys["quarantine"] { settings.quarantinePath = try v.string() }
        if let v = keys["selective"] { try selective(v, into: &settings.selective) }
        if let v = keys["fail_on_perf_regression"] { settings.failOnPerfRegression = try v.bool() }
        if let v = keys["exclusive"] { settings.exclusive = try v.strings() }
        if let v = keys["not_exclusive"] { settings.notExclusive = try v.strings() }
        if let v = keys["destinations"] { settings.destinations = try destinations(v) }
        if let dest = keys["destination"] {
            let d = try dest.mapping(allowed: ["name", "environment", "arguments"])
            var destination = Destination.local
            if let v = d["name"] { destination.name = try v.string() }
            if let v = d["environment"] { destination.environment = try v.environmentMap() }
            if let v = d["arguments"] { destination.arguments = try v.strings() }
            settings.destination = destination
        }
    }
}

/// The sections of the config with more than a few keys, each read by a function of its own.
extension ConfigFile {
    /// `known_hosts`, `ssh_config`, `host_key_policy` and the `ssh:` timings: how agents are reached.
    static func ssh(_ keys: [String: ConfigNode], into ssh: inout SSHSettings) throws(FanoutError) {
        if let v = keys["known_hosts"] {
            ssh.knownHosts = try v.string()
            ssh.explicit.insert("known_hosts")
        }
        if let v = keys["ssh_config"] { ssh.sshConfig = try v.string() }
        if let v = keys["host_key_policy"] {
            ssh.hostKeyPolicy = HostKeyPolicy(rawValue: try v.oneOf(HostKeyPolicy.allCases.map(\.rawValue))) ?? .strict
        }
        if let node = keys["ssh"] {
            let o = try node.mapping(allowed: ["connect_timeout", "keepalive", "dead_after", "keep_remote", "bundles_kept", "lease"])
            if let v = o["connect_timeout"] {
                ssh.connectTimeout = try v.double(min: 0.1)
                ssh.explicit.insert("connect_timeout")
            }
            if let v = o["keepalive"] {
                ssh.keepaliveInterval = try v.int(min: 1)
                ssh.explicit.insert("keepalive")
            }
            if let v = o["dead_after"] { ssh.deadAfter = try v.double(min: 1) }
            if let v = o["keep_remote"] { ssh.keepRemote = try v.bool() }
            if let v = o["bundles_kept"] { ssh.bundlesKept = try v.int(min: 1) }
            if let v = o["lease"] { ssh.leaseSeconds = try v.int(min: 3) }
        }
    }

    /// `queue:`: the build's shared queue (docs/queue-mode.md).
    static func queue(_ queue: ConfigNode) throws(FanoutError) -> QueueJob {
        // The URL and the timings; the build id and the worker come from flags, FANOUT_* or the CI (QueueJob).
        let q = try queue.mapping(allowed: ["url", "lease", "seed_wait", "expires_after", "requeue_budget"])
        guard let url = q["url"] else { throw queue.fail("needs a url (postgres://USER@HOST:PORT/DATABASE)") }
        var job = QueueJob(url: try url.string(), build: "", worker: "")
        if let v = q["lease"] { job.lease = try v.double(min: 3) }
        if let v = q["seed_wait"] { job.seedWait = try v.double(min: 1) }
        if let v = q["expires_after"] { job.expiresAfter = try v.double(min: 60) }
        if let v = q["requeue_budget"] { job.requeueBudget = try v.int(min: 0) }
        return job
    }

    /// `agents:`: the SSH agents, each with its host, workdir, slots and `environment:`.
    static func agents(_ agents: ConfigNode) throws(FanoutError) -> [SSHAgentSpec] {
        try agents.list().map { node throws(FanoutError) in
            let a = try node.mapping(allowed: ["name", "host", "port", "user", "proxy_jump", "identity",
                                               "passphrase_env", "slots", "workdir", "swift", "tags", "destinations",
                                               "environment"])
            guard let host = a["host"] else {
                throw node.fail("needs a host (a host name, an address, or a Host alias of your ~/.ssh/config)")
            }
            guard let workdir = a["workdir"] else { throw node.fail("needs a workdir (an absolute path on the agent)") }
            let hostName = try host.string()
            var spec = SSHAgentSpec(
                name: try a["name"]?.string() ?? hostName, host: hostName, port: try a["port"]?.int(min: 1, max: 65535),
                user: try a["user"]?.string(), proxyJump: try a["proxy_jump"]?.string(),
                identity: try a["identity"]?.string(),
                passphraseEnvironment: try a["passphrase_env"]?.string(), slots: try a["slots"]?.int(min: 1) ?? 2,
                workdir: try workdir.string(), swift: try a["swift"]?.string(), tags: try a["tags"]?.strings() ?? [],
                destinations: try a["destinations"]?.strings())
            spec.environment = try a["environment"]?.environmentMap() ?? [:]
            return spec
        }
    }

    /// `destinations:`: each destination's name, environment, runner, build settings and device.
    static func destinations(_ list: ConfigNode) throws(FanoutError) -> [DestinationSpec] {
        try list.list().map { node throws(FanoutError) in
            let d = try node.mapping(allowed: ["name", "environment", "arguments", "configuration", "build_flags",
                                               "runner", "tags", "bundle", "tests_list", "device", "minimum_timeout"])
            guard let name = d["name"] else { throw node.fail("needs a name") }
            var frameworks = Framework.swiftPM
            if let runner = d["runner"] {
                switch try runner.oneOf(["both", "xctest", "swift-testing", "xcodebuild"]) {
                case "xctest": frameworks = [.xctest]
                case "swift-testing": frameworks = [.swiftTesting]
                case "xcodebuild": frameworks = [.xcodebuild]
                default: break
                }
            }
            var device: Device?
            if let node = d["device"] {
                device = try node.device()
                guard frameworks == [.xcodebuild] else { throw node.fail("needs `runner: xcodebuild` beside it") }
            } else if frameworks == [.xcodebuild] {
                device = Device(platform: "macOS")
            }
            return DestinationSpec(
                destination: Destination(name: try name.string(), environment: try d["environment"]?.environmentMap() ?? [:],
                                         arguments: try d["arguments"]?.strings() ?? [], device: device),
                configuration: try d["configuration"]?.oneOf(["debug", "release"]),
                buildFlags: try d["build_flags"]?.strings(), frameworks: frameworks,
                tags: try d["tags"]?.strings() ?? [], bundlePath: try d["bundle"]?.string(),
                testsList: try d["tests_list"]?.string(), minimumTimeout: try d["minimum_timeout"]?.double(min: 1))
        }
    }
}

/// A node of the config with where it came from, for errors that point at the line.
extension ConfigFile {
    /// `selective: true`, or a mapping: `enabled`, `inputs`, `target_inputs`, `always_run`, `feedback_first`.
    static func selective(_ node: ConfigNode, into selective: inout SelectiveSettings) throws(FanoutError) {
        if case .scalar = node.node {
            selective.enabled = try node.bool()
            return
        }
        let s = try node.mapping(allowed: ["enabled", "inputs", "target_inputs", "always_run", "feedback_first", "observe"])
        selective.enabled = try s["enabled"]?.bool() ?? true
        if let v = s["inputs"] { selective.inputs = try v.strings() }
        if let v = s["target_inputs"] {
            guard case .mapping(let m) = v.node else { throw v.fail("must map test target names to lists of globs") }
            for (k, value) in m {
                guard case .scalar(let key) = k else { throw v.fail("has a key that is not a plain name") }
                selective.targetInputs[key.string] = try ConfigNode(node: value, path: "\(v.path).\(key.string)",
                                                                    file: v.file, environment: v.environment).strings()
            }
        }
        if let v = s["always_run"] {
            selective.alwaysRun = try v.strings()
            for pattern in selective.alwaysRun {
                do {
                    _ = try Regex(pattern)
                } catch {
                    throw v.fail("has '\(pattern)', which is not a valid regex: \(error)")
                }
            }
        }
        if let v = s["feedback_first"] { selective.feedbackFirst = try v.bool() }
        if let v = s["observe"] {
            // true | false, or the one way to observe: preload | strace.
            switch try v.string().lowercased() {
            case "preload": selective.observer = .preload
            case "strace": selective.observer = .strace
            default:
                do { selective.observe = try v.bool() } catch { throw v.fail("must be true, false, preload or strace") }
            }
        }
    }

    /// `hooks:`: `timeout` (seconds, for hooks that name none), then `run`, `agent` and `slot`, each with `set_up`
    /// and `tear_down`: a shell line, or `{command: LINE, timeout: SECONDS}`. A hook's line is taken as written:
    /// its shell expands `$NAME` and `${NAME}` from the hook's environment (the worker identity, `environment:`).
    /// The config never pastes a value into it, so nothing reaches a shell unquoted.
    static func hooks(_ node: ConfigNode) throws(FanoutError) -> HookSettings {
        let h = try node.mapping(allowed: ["timeout", "run", "agent", "slot"])
        let timeout = try h["timeout"]?.double(min: 1) ?? HookSettings.defaultTimeout
        var hooks = HookSettings()
        for scope in HookReport.Scope.allCases {
            guard let pair = h[scope.rawValue] else { continue }
            let p = try pair.mapping(allowed: ["set_up", "tear_down"])
            for (key, phase) in [("set_up", HookReport.Phase.setUp), ("tear_down", .tearDown)] {
                guard let v = p[key] else { continue }
                var line: ConfigNode = v
                var seconds = timeout
                if case .mapping = v.node {
                    let c = try v.mapping(allowed: ["command", "timeout"])
                    guard let command = c["command"] else { throw v.fail("needs `command`: a shell line") }
                    line = command
                    seconds = try c["timeout"]?.double(min: 1) ?? timeout
                }
                let text = try line.verbatim().trimmingCharacters(in: .whitespacesAndNewlines)
                guard !text.isEmpty else { throw line.fail("is empty: give a shell line, or leave the key out") }
                hooks[scope, phase] = HookSettings.Command(line: text, timeout: seconds)
            }
        }
        return hooks
    }

    /// `timeout:`: when a test is hung (stall) and how long it may run (ceiling); see TimeLimitRules.
    static func timeLimits(_ node: ConfigNode, into settings: inout RunSettings) throws(FanoutError) {
        if case .mapping(let m) = node.node,
           let old = m.keys.compactMap({ $0.string }).first(where: { ["factor", "minimum"].contains($0) }) {
            throw FanoutError("\(node.file): 'timeout.\(old)' is gone: Fanout no longer kills a unit at a multiple of its estimate",
                              hint: "A test is stopped only when it makes no progress (no output, no CPU) for `stall` seconds, or "
                                + "runs past `ceiling`: use timeout: { stall: 300, ceiling: 1800 } (see README.md, \"Timeouts\").")
        }
        let t = try node.mapping(allowed: ["stall", "ceiling", "stall_factor", "ceiling_factor", "minimum_stall",
                                           "minimum_ceiling", "classes"])
        if let v = t["stall"] { settings.timeLimits.stall = try v.double(min: 1) }
        if let v = t["ceiling"] { settings.timeLimits.ceiling = try v.double(min: 1) }
        if let v = t["stall_factor"] { settings.timeLimits.stallFactor = try v.double(min: 1) }
        if let v = t["ceiling_factor"] { settings.timeLimits.ceilingFactor = try v.double(min: 1) }
        if let v = t["minimum_stall"] { settings.timeLimits.minimumStall = try v.double(min: 1) }
        if let v = t["minimum_ceiling"] { settings.timeLimits.minimumCeiling = try v.double(min: 1) }
        if let classes = t["classes"] {
            settings.classTimeLimits = try classes.list().map { item throws(FanoutError) in
                let c = try item.mapping(allowed: ["match", "stall", "ceiling"])
                guard let match = c["match"] else { throw item.fail("needs `match`: a regex over Module.Class") }
                let limit = ClassTimeLimit(pattern: try match.string(), stall: try c["stall"]?.double(min: 1),
                                           ceiling: try c["ceiling"]?.double(min: 1))
                guard limit.limits.stall != nil || limit.limits.ceiling != nil else {
                    throw item.fail("needs `stall` or `ceiling` (seconds)")
                }
                return limit
            }
        }
    }
}

struct ConfigNode {
    let node: Node
    let path: String
    let file: String
    let environment: [String: String]
    /// `${FANOUT_WORKER}` and the other worker identity variables stay as written (`environment:` values and
    /// hooks): Fanout or the hook's shell gives them their value per process, never the coordinator's environment.
    var keepsIdentity = false

    /// This node, with the worker identity left for later.
    var keepingIdentity: ConfigNode {
        var node = self
        node.keepsIdentity = true
        return node
    }

    private var place: String {
        let line = node.mark.map { ":\($0.line)" } ?? ""
        return "\(file)\(line)"
    }

    func fail(_ what: String) -> FanoutError {
        FanoutError("\(place): \(path.isEmpty ? "the file" : "'\(path)'") \(what)",
                    hint: "See config/fanout.example.yml for every key and its meaning.")
    }

    func mapping(allowed: Set<String>) throws(FanoutError) -> [String: ConfigNode] {
        guard case .mapping(let m) = node else { throw fail("must be a mapping of keys to values") }
        var out: [String: ConfigNode] = [:]
        for (k, v) in m {
            guard case .scalar(let key) = k else { throw fail("has a key that is not a plain name") }
            let full = path.isEmpty ? key.string : "\(path).\(key.string)"
            guard allowed.contains(key.string) else {
                let line = k.mark.map { ":\($0.line)" } ?? ""
                throw FanoutError("\(file)\(line): unknown key '\(full)'",
                                  hint: "Known keys here: \(allowed.sorted().joined(separator: ", ")). See config/fanout.example.yml.")
            }
            out[key.string] = ConfigNode(node: v, path: full, file: file, environment: environment)
        }
        return out
    }

    func string() throws(FanoutError) -> String {
        guard case .scalar(let s) = node else { throw fail("must be a single value") }
        return try interpolate(s.string)
    }

    /// The value as written, `${…}` included (a hook's shell line).
    func verbatim() throws(FanoutError) -> String {
        guard case .scalar(let s) = node else { throw fail("must be a single value") }
        return s.string
    }

    func strings() throws(FanoutError) -> [String] {
        switch node {
        case .scalar: return [try string()]
        case .sequence(let seq):
            var out: [String] = []
            for (i, n) in seq.enumerated() {
                out.append(try ConfigNode(node: n, path: "\(path)[\(i)]", file: file, environment: environment).string())
            }
            return out
        default: throw fail("must be a value or a list of values")
        }
    }

    func list() throws(FanoutError) -> [ConfigNode] {
        guard case .sequence(let seq) = node else { throw fail("must be a list") }
        return seq.enumerated().map { i, n in ConfigNode(node: n, path: "\(path)[\(i)]", file: file, environment: environment) }
    }

    func stringMap() throws(FanoutError) -> [String: String] {
        guard case .mapping(let m) = node else { throw fail("must be a mapping of names to values") }
        var out: [String: String] = [:]
        for (k, v) in m {
            guard case .scalar(let key) = k else { throw fail("has a key that is not a plain name") }
            out[key.string] = try ConfigNode(node: v, path: "\(path).\(key.string)", file: file,
                                             environment: environment, keepsIdentity: keepsIdentity).string()
        }
        return out
    }

    /// Environment variables for the tests: names must be `[A-Za-z_][A-Za-z0-9_]*`, since a shell (on an agent) can
    /// assign nothing else, and a name like `A;B` or `PATH ` is a typo or worse. The error names the key's line.
    func environmentMap() throws(FanoutError) -> [String: String] {
        guard case .mapping(let m) = node else { throw fail("must be a mapping of variable names to values") }
        for (k, _) in m {
            guard case .scalar(let key) = k else { throw fail("has a key that is not a plain name") }
            guard ShellQuote.isVariableName(key.string) else {
                let line = k.mark.map { ":\($0.line)" } ?? ""
                throw FanoutError("\(file)\(line): '\(path)' has \(key.string.debugDescription), which is not an environment "
                                  + "variable name",
                                  hint: "A name is letters, digits and _, not starting with a digit (e.g. LOG_LEVEL).")
            }
            guard !WorkerIdentity.names.contains(key.string) else {
                let line = k.mark.map { ":\($0.line)" } ?? ""
                throw FanoutError("\(file)\(line): '\(path)' sets \(key.string), which Fanout sets itself in every test process",
                                  hint: "Use it in a value instead, e.g. DATABASE_URL: postgres://localhost/app_test_${\(key.string)}.")
            }
        }
        let values = try keepingIdentity.stringMap()
        // `$FANOUT_WORKER` without braces would reach the tests as written: no shell expands these values.
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            if let bare = WorkerIdentity.names.first(where: { value.contains("$" + $0) }) {
                throw FanoutError("\(file): '\(path).\(name)' has $\(bare), which would reach the tests as written",
                                  hint: "Write ${\(bare)}: Fanout expands it per test process (no shell reads these values).")
            }
        }
        return values
    }

    /// `device: {platform: iOS Simulator, model: iPhone 16, os: "18.2"}` of an xcodebuild destination. Its values
    /// end up in xcodebuild's `-destination` specifier, where `,` and `=` separate keys: they may hold neither.
    func device() throws(FanoutError) -> Device {
        let m = try mapping(allowed: ["platform", "model", "os", "device_type", "runtime", "xcodebuild", "xcrun",
                                      "erase_between_units"])
        let platforms = ["iOS Simulator", "tvOS Simulator", "watchOS Simulator", "visionOS Simulator", "macOS"]
        let platform = try m["platform"]?.oneOf(platforms) ?? "iOS Simulator"
        var device = Device(platform: platform)
        for (key, node) in [("model", m["model"]), ("os", m["os"])] {
            guard let node else {
                if platform != "macOS" { throw fail("needs `\(key)` for a simulator (e.g. model: iPhone 16, os: \"18.2\")") }
                continue
            }
            let value = try node.string()
            guard !value.isEmpty, !value.contains(","), !value.contains("="), !value.contains(where: \.isNewline) else {
                throw node.fail("must be a plain name without ',' or '=' (they separate xcodebuild's destination keys)")
            }
            if key == "model" { device.model = value } else { device.os = value }
        }
        device.deviceType = try m["device_type"]?.string()
        device.runtime = try m["runtime"]?.string()
        if let v = m["xcodebuild"] { device.xcodebuild = try v.string() }
        if let v = m["xcrun"] { device.xcrun = try v.string() }
        if let v = m["erase_between_units"] { device.eraseBetweenUnits = try v.bool() }
        return device
    }

    func int(min: Int, max: Int = .max) throws(FanoutError) -> Int {
        guard let v = Int(try string()), v >= min, v <= max else {
            throw fail(max == .max ? "must be a whole number ≥ \(min)" : "must be a whole number from \(min) to \(max)")
        }
        return v
    }

    func double(min: Double, max: Double = .infinity) throws(FanoutError) -> Double {
        guard let v = Double(try string()), v >= min, v <= max else {
            throw fail(max.isFinite ? "must be a number from \(min) to \(max)" : "must be a number ≥ \(min)")
        }
        return v
    }

    func bool() throws(FanoutError) -> Bool {
        switch try string().lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw fail("must be true or false")
        }
    }

    func oneOf(_ choices: [String]) throws(FanoutError) -> String {
        let v = try string()
        guard choices.contains(v) else { throw fail("must be one of \(choices.joined(separator: ", ")) (got '\(v)')") }
        return v
    }

    /// `${NAME}` → the environment variable NAME; an unset variable is an error, not an empty string.
    private func interpolate(_ s: String) throws(FanoutError) -> String {
        guard s.contains("${") else { return s }
        var out = ""
        var rest = Substring(s)
        while let open = rest.range(of: "${") {
            out += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].firstIndex(of: "}") else { throw fail("has an unclosed ${") }
            let name = String(rest[open.upperBound..<close])
            if keepsIdentity, WorkerIdentity.names.contains(name) {
                out += "${\(name)}"
                rest = rest[rest.index(after: close)...]
                continue
            }
            guard let value = environment[name] else {
                if WorkerIdentity.names.contains(name) {
                    throw fail("uses ${\(name)}, which only `environment:` values and hooks may use (Fanout sets it per test "
                               + "process), and the environment variable \(name) is not set here either")
                }
                throw fail("uses ${\(name)}, but the environment variable \(name) is not set")
            }
            out += value
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }
}
