@testable import FanoutCoordinator
import FanoutCore
import FanoutRunners
import FanoutTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(10))) struct ConfigFileTests {
    @Test func theDocumentedExampleIsValidAndMeansTheDefaults() throws {
        var settings = RunSettings()
        try ConfigFile.load(repositoryRoot.appendingPathComponent("config/fanout.example.yml").path, into: &settings)
        #expect(settings == RunSettings(), "the example documents the defaults: keep them in step")
    }

    @Test func valuesApplyAndEnvironmentIsInterpolated() throws {
        var s = RunSettings()
        try ConfigFile.parse("""
            slots: 3
            filter: ["^A\\\\.", "B"]
            skip: Slow
            build: { configuration: release, flags: [-Xswiftc, -DCI] }
            timeout: { stall: 5, ceiling: 50, stall_factor: 4, classes: [{ match: "^App\\\\.Slow", ceiling: 20 }] }
            destination:
              name: ci
              environment: { TOKEN: "${SECRET}-x" }
            """, file: "f.yml", into: &s, environment: ["SECRET": "s3"])
        #expect(s.slots == 3)
        #expect(s.filters == ["^A\\.", "B"] && s.skips == ["Slow"])
        #expect(s.configuration == "release" && s.buildFlags == ["-Xswiftc", "-DCI"])
        #expect(s.timeLimits.stall == 5 && s.timeLimits.ceiling == 50 && s.timeLimits.stallFactor == 4)
        #expect(s.classTimeLimits == [ClassTimeLimit(pattern: "^App\\.Slow", ceiling: 20)])
        #expect(s.destination.name == "ci" && s.destination.environment["TOKEN"] == "s3-x")
    }

    @Test func hooksAndTheWorkerIdentity() throws {
        var s = RunSettings()
        try ConfigFile.parse("""
            destination:
              environment: { DATABASE_URL: "postgres://${DB_HOST}/app_${FANOUT_WORKER}_${FANOUT_DESTINATION}" }
            agents:
              - { host: a1, workdir: /w, environment: { CACHE: "/tmp/c${FANOUT_SLOT}" } }
            hooks:
              timeout: 45
              slot:
                set_up: createdb "app_$FANOUT_WORKER" && echo ${HOME} ${UNSET}
                tear_down: { command: 'dropdb --if-exists "app_${FANOUT_WORKER}"', timeout: 7 }
              run: { tear_down: ./clean.sh }
            """, file: "f.yml", into: &s, environment: ["DB_HOST": "db.local", "FANOUT_WORKER": "job-3"])
        // The identity is Fanout's, per process: never the coordinator's FANOUT_WORKER (queue mode's job name).
        #expect(s.destination.environment["DATABASE_URL"] == "postgres://db.local/app_${FANOUT_WORKER}_${FANOUT_DESTINATION}")
        #expect(s.agents.first?.environment == ["CACHE": "/tmp/c${FANOUT_SLOT}"])
        // A hook is taken as written: its shell expands it, the config pastes nothing into a shell line.
        #expect(s.hooks[.slot, .setUp] == .init(line: #"createdb "app_$FANOUT_WORKER" && echo ${HOME} ${UNSET}"#, timeout: 45))
        #expect(s.hooks[.slot, .tearDown] == .init(line: #"dropdb --if-exists "app_${FANOUT_WORKER}""#, timeout: 7))
        #expect(s.hooks[.run, .tearDown]?.line == "./clean.sh" && s.hooks[.run, .setUp] == nil && s.hooks[.agent, .setUp] == nil)
        #expect(s.hooks.inOrder.map(\.0) == [.init(.slot, .setUp), .init(.slot, .tearDown), .init(.run, .tearDown)])

        func refused(_ yaml: String, _ words: [String]) {
            var s = RunSettings()
            do {
                try ConfigFile.parse(yaml, file: "f.yml", into: &s, environment: [:])
                Issue.record("accepted: \(yaml)")
            } catch {
                let text = "\(error)"
                for w in words { #expect(text.contains(w), "\(yaml): \(text)") }
            }
        }
        refused("destination: { environment: { FANOUT_WORKER: '3' } }", ["f.yml:1", "sets FANOUT_WORKER, which Fanout sets itself"])
        refused("report_dir: /tmp/r${FANOUT_WORKER}", ["'report_dir' uses ${FANOUT_WORKER}, which only `environment:` values and hooks may use"])
        refused("destination: { environment: { DB: 'app_$FANOUT_WORKER' } }", ["'destination.environment.DB' has $FANOUT_WORKER"])
        refused("hooks: { slot: { setup: x } }", ["unknown key 'hooks.slot.setup'", "set_up, tear_down"])
        refused("hooks: { worker: { set_up: x } }", ["unknown key 'hooks.worker'"])
        refused("hooks: { slot: { set_up: '  ' } }", ["'hooks.slot.set_up' is empty"])
        refused("hooks: { slot: { set_up: { timeout: 3 } } }", ["needs `command`"])
        refused("hooks: { timeout: 0 }", ["'hooks.timeout' must be a number ≥ 1.0"])
        refused("agents: [{ host: a, workdir: /w, environment: { 'A B': x } }]", ["not an environment variable name"])
    }

    @Test func howRunTimeInputsAreObservedAndWhatIsMeasuredAlone() throws {
        func parsed(_ yaml: String) throws(FanoutError) -> RunSettings {
            var s = RunSettings()
            try ConfigFile.parse(yaml, file: "f.yml", into: &s, environment: [:])
            return s
        }
        #expect(try parsed("selective: { observe: strace }").selective.observer == .strace)
        #expect(try parsed("selective: { observe: preload }").selective.observer == .preload)
        let off = try parsed("selective: { observe: false }").selective
        #expect(!off.observe && off.observer == .any)
        #expect(throws: FanoutError.self) { try parsed("selective: { observe: ptrace }") }
        do {
            _ = try parsed("selective: { observe: ptrace }")
        } catch {
            #expect(error.description.contains("must be true, false, preload or strace"), "\(error)")
        }
        let s = try parsed("not_exclusive: ['^App\\.Stopwatch']")
        #expect(s.notExclusive == ["^App\\.Stopwatch"])
        let classes = try PerformanceClasses(settings: s, measured: [SuiteID(module: "App", name: "Stopwatch"): ["testLap"]],
                                             fromSources: MeasureCalls.Found(whole: ["Sorting", "PerformanceLess"]))
        #expect(classes.why(SuiteID(module: "App", name: "Stopwatch")) == nil, "not_exclusive wins over the history")
        #expect(classes.why(SuiteID(module: "App", name: "Sorting")) == "its sources call measure")
        #expect(classes.why(SuiteID(module: "App", name: "LoginPerformanceTests")) == "its name matches exclusive")
        #expect(classes.why(SuiteID(module: "App", name: "Login")) == nil)
        // What runs alone: the tests that measure, where they are known; the whole class where they are not.
        let known = try PerformanceClasses(settings: RunSettings(), measured: [SuiteID(module: "App", name: "Clock"): ["testLap"]],
                                           fromSources: MeasureCalls.Found(tests: ["Sorting": ["testSort"]], whole: ["Harness"]))
        func item(_ name: String, _ tests: [String]) -> WorkItem {
            WorkItem(suite: SuiteID(module: "App", name: name), framework: .xctest, destination: "local", tests: tests,
                     isWholeSuite: true, estimate: Double(tests.count), source: .history(samples: 1))
        }
        let splitter = MethodSplitter(slots: 4)
        let clock = known.separate(item("Clock", ["testReset", "testLap", "testStart"]), splitter: splitter, history: .empty("local"))
        #expect(clock.map(\.tests) == [["testLap"], ["testReset", "testStart"]] && clock.map(\.exclusive) == [true, false])
        let sorting = known.separate(item("Sorting", ["testSort", "testOrder"]), splitter: splitter, history: .empty("local"))
        #expect(sorting.map(\.tests) == [["testSort"], ["testOrder"]] && sorting.map(\.exclusive) == [true, false])
        for whole in [item("Harness", ["testA", "testB"]), item("LoadPerformance", ["testA", "testB"])] {
            let parts = known.separate(whole, splitter: splitter, history: .empty("local"))
            #expect(parts.count == 1 && parts[0].exclusive && parts[0].tests == ["testA", "testB"], "\(whole.suite): whole, alone")
        }
        #expect(known.separate(item("Clock", ["testReset"]), splitter: splitter, history: .empty("local")).map(\.exclusive) == [false],
                "a part of the class without its measuring tests shares")
        #expect(known.separate(item("Login", ["testA"]), splitter: splitter, history: .empty("local")).map(\.exclusive) == [false])
        var bad = RunSettings()
        bad.notExclusive = ["("]
        #expect(throws: FanoutError.self) { try bad.validate() }
    }

    @Test func agentsNamedByAliasWithBastions() throws {
        var s = RunSettings()
        try ConfigFile.parse("""
            ssh_config: ~/work/ssh_config
            known_hosts: /k
            ssh: { connect_timeout: 3 }
            agents:
              - { host: build-1, workdir: /w }
              - { host: 10.0.0.2, port: 2200, user: ci, proxy_jump: "jump@b1:2222,b2", workdir: /w }
            """, file: "f.yml", into: &s)
        #expect(s.ssh.sshConfig == "~/work/ssh_config")
        #expect(s.ssh.explicit == ["known_hosts", "connect_timeout"], "what fanout.yml set wins over the ssh config")
        #expect(s.agents[0].user == nil && s.agents[0].port == nil && s.agents[0].proxyJump == nil)
        #expect(s.agents[1].port == 2200 && s.agents[1].user == "ci" && s.agents[1].proxyJump == "jump@b1:2222,b2")
        var bad = RunSettings()
        #expect(throws: FanoutError.self) {
            try ConfigFile.parse("agents:\n  - { host: a, port: 70000, workdir: /w }\n", file: "f.yml", into: &bad)
        }
    }

    @Test func selectiveSettingsApply() throws {
        var s = RunSettings()
        try ConfigFile.parse("selective: true\n", file: "f.yml", into: &s)
        #expect(s.selective.enabled && s.isSelective)
        var m = RunSettings()
        try ConfigFile.parse("""
            selective:
              inputs: [Fixtures/**]
              target_inputs: { LeafTests: [Golden/*.txt] }
              always_run: [Network]
              feedback_first: yes
            """, file: "f.yml", into: &m)
        #expect(m.selective.enabled, "a selective: mapping turns it on unless it says enabled: false")
        #expect(m.selective.inputs == ["Fixtures/**"] && m.selective.targetInputs == ["LeafTests": ["Golden/*.txt"]])
        #expect(m.selective.alwaysRun == ["Network"] && m.selective.feedbackFirst)
        m.repeatCount = 5
        #expect(!m.isSelective && !m.tracksInputs, "a flake hunt never skips")
    }

    @Test(arguments: [
        ("selective:\n  inputz: [a]\n", "f.yml:2", "unknown key 'selective.inputz'"),
        ("selective:\n  always_run: ['(']\n", "f.yml:2", "not a valid regex"),
        ("selective:\n  target_inputs: [a]\n", "f.yml:2", "must map test target names"),
        ("slots: two\n", "f.yml:1", "'slots' must be a whole number"),
        ("a: 1\nslotz: 2\n", "f.yml:1", "unknown key 'a'"),
        ("build:\n  configuration: fast\n", "f.yml:2", "must be one of debug, release"),
        ("destination:\n  environment: { A: \"${NOPE}\" }\n", "f.yml:2", "NOPE is not set"),
        ("slots: [1, 2\n", "f.yml", "not valid YAML"),
        ("- a\n- b\n", "f.yml:1", "must be a mapping"),
        ("destination:\n  environment:\n    GOOD: 1\n    \"A;B\": 2\n", "f.yml:4", "\"A;B\", which is not an environment variable name"),
        ("destinations:\n  - name: d\n    environment: { 9LIVES: x }\n", "f.yml:3", "'destinations[0].environment' has \"9LIVES\""),
        ("destination:\n  environment: { \"LOG LEVEL\": x }\n", "f.yml:2", "not an environment variable name"),
        ("destination:\n  environment: { \"A=B\": x }\n", "f.yml:2", "not an environment variable name"),
        ("destinations:\n  - name: d\n    runner: xcodebuild\n    device: { platform: Android, model: x, os: \"1\" }\n",
         "f.yml:4", "must be one of iOS Simulator"),
        ("destinations:\n  - name: d\n    runner: xcodebuild\n    device: { model: \"iPhone 16,OS=17\", os: \"18.2\" }\n",
         "f.yml:4", "without ',' or '='"),
        ("destinations:\n  - name: d\n    device: { model: iPhone 16, os: \"18.2\" }\n", "f.yml:3", "needs `runner: xcodebuild`"),
        ("destinations:\n  - name: d\n    runner: xcodebuild\n    device: { os: \"18.2\" }\n", "f.yml:4", "needs `model`"),        ("timeout: { factor: 3, minimum: 60 }\n", "f.yml", "is gone: Fanout no longer kills a unit at a multiple of its estimate"),
        ("timeout:\n  classes:\n    - { match: Slow }\n", "f.yml:3", "needs `stall` or `ceiling`"),
        ("timeout: { stal: 3 }\n", "f.yml:1", "unknown key 'timeout.stal'"),
    ])
    func errorsNameTheFileLineAndKey(text: String, place: String, message: String) {
        var s = RunSettings()
        do {
            try ConfigFile.parse(text, file: "f.yml", into: &s, environment: [:])
            Issue.record("no error for \(text)")
        } catch {
            #expect(error.description.contains(place), "\(error)")
            #expect(error.description.contains(message), "\(error)")
            #expect(error.exitCode == .usage)
        }
    }
}

/// The documented Apple destinations (config/fanout.example.yml, between its apple-destinations markers) mean what
/// the comments say.
@Suite struct AppleConfigTests {
    @Test func theDocumentedAppleDestinationsParse() throws {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("config/fanout.example.yml"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let begin = try #require(lines.firstIndex { $0.contains("apple-destinations-begin") })
        let end = try #require(lines.firstIndex { $0.contains("apple-destinations-end") })
        let block = lines[(begin + 1)..<end].map { $0.hasPrefix("# ") ? String($0.dropFirst(2)) : String($0) }
        var s = RunSettings()
        try ConfigFile.parse((["destinations:"] + block).joined(separator: "\n"), file: "example", into: &s)
        #expect(s.destinations.map(\.name) == ["iphone-16", "ipad"])
        let phone = s.destinations[0]
        #expect(phone.frameworks == [.xcodebuild] && phone.tags == ["macos"] && phone.minimumTimeout == 300)
        #expect(phone.bundlePath?.hasSuffix(".xctestrun") == true && phone.testsList == "build/tests.json")
        #expect(phone.destination.device == Device(platform: "iOS Simulator", model: "iPhone 16", os: "18.2"))
        let pad = try #require(s.destinations[1].destination.device)
        #expect(pad.eraseBetweenUnits && pad.model == "iPad Air 11-inch (M3)")
        #expect(s.destinations[1].destination.deviceClass == "iPad Air 11-inch (M3), iOS Simulator 18.2")
        #expect(s.destinations[1].destination.environment["DEVELOPER_DIR"]?.hasPrefix("/Applications/Xcode") == true)
        try s.validate()
        #expect(s.timeLimitFloor(on: s.destinations[1]) == 300, "UI tests on a simulator get a higher floor")
    }

    @Test func anXcodebuildDestinationNeedsAnXCTestRun() {
        var s = RunSettings()
        s.destinations = [DestinationSpec(destination: Destination(name: "mac", device: Device(platform: "macOS")),
                                          frameworks: [.xcodebuild])]
        #expect(throws: FanoutError.self) { try s.validate() }
        s.destinations[0].bundlePath = "App.xctestrun"
        #expect(throws: Never.self) { try s.validate() }
        s.destinations = [DestinationSpec(destination: Destination(name: "linux"), bundlePath: "App.xctestrun")]
        #expect(throws: FanoutError.self) { try s.validate() }
    }
}

@Suite(.timeLimit(.minutes(10))) struct BuildFolderTests {
    @Test func buildFoldersAreNamedTheSameInEveryRun() {
        // Pinned values: a digest seeded per process would rebuild from scratch in every run.
        #expect(RunPreparation.stableDigest("debug -Xswiftc -DCI") == RunPreparation.stableDigest("debug -Xswiftc -DCI"))
        #expect(RunPreparation.stableDigest("") == "cbf29ce484222325")
        #expect(RunPreparation.stableDigest("a") == "af63dc4c8601ec8c")
        #expect(RunPreparation.stableDigest("debug -DA") != RunPreparation.stableDigest("debug -DB"))
    }
}
