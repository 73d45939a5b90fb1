import FanoutCore
import Foundation
@testable import FanoutRunners

// The xcodebuild runner's readers under the fuzzer of FuzzTests.swift: its console parser (macOS XCTest lines and a
// result bundle printed after them), the result bundle's JSON, the test list and .xctestrun files.

// MARK: - Corpus

/// The xcodebuild fixtures (Tests/Fixtures/Xcodebuild, see SOURCES.md there), and a unit of every test they name.
struct XcodebuildCorpus: Sendable {
    static let folder = Captures.folder.deletingLastPathComponent().appendingPathComponent("Xcodebuild")
    static let logNames = ["xcbeautify-TestLog.txt", "xcbeautify-ParallelTestLog.txt", "xcbeautify-MixedTestLog_6_0_macOS.txt",
                           "xcodebuild-test-without-building-xctestrun-uitest-fail-xcode8.log"]
    static let bundleNames = ["xcresulttool-test-results-tests-failures-xcode26.json",
                              "xcresulttool-test-results-tests-ui-and-unit-xcode26.json"]
    static let xctestrunNames = ["FakeCounterAppTest_FakeAppTestPlan_iphoneos18.0-arm64.formatv2.xctestrun",
                                 "SampleXCUITests_iphoneos14.4-arm64.formatv1-uitest.xctestrun",
                                 "Replay/Products/RandomStuff_RandomStuff_iphonesimulator26.2-arm64.xctestrun"]

    /// Console logs and whole unit outputs (console, then the result bundle between its marker lines), in lines.
    var logs: [[[UInt8]]] = []
    /// `xcresulttool get test-results tests` JSON.
    var bundles: [[UInt8]] = []
    var enumerations: [[UInt8]] = []
    /// XML .xctestrun files, and the same in the binary format.
    var xctestruns: [[UInt8]] = []
    var binaryXctestruns: [[UInt8]] = []
    var unit = FuzzShard.xcodebuildUnit([:])
    var testCount = 0

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: folder.appendingPathComponent(name)))
    }

    static func load() throws -> XcodebuildCorpus {
        var c = XcodebuildCorpus()
        var tests: [SuiteID: [String]] = [:]
        func add(_ suite: SuiteID, _ test: String) {
            if tests[suite]?.contains(test) != true { tests[suite, default: []].append(test) }
        }
        for name in logNames {
            let bytes = try Self.bytes(name)
            c.logs.append(FuzzCorpus.lines(bytes))
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
                if let rest = line.dropPrefix("Test case '"), let dot = rest.firstIndex(of: "."),
                   let end = rest.range(of: "()'") {
                    // Parallel clones name no target.
                    add(SuiteID(module: "ParallelTests", name: String(rest[..<dot])), String(rest[rest.index(after: dot)..<end.lowerBound]))
                } else if let open = line.range(of: "-["), let space = line[open.upperBound...].firstIndex(of: " "),
                          let close = line[space...].firstIndex(of: "]") {
                    let qualified = line[open.upperBound..<space].split(separator: ".")
                    guard qualified.count == 2 else { continue }
                    add(SuiteID(module: String(qualified[0]), name: String(qualified[1])),
                        String(line[line.index(after: space)..<close]))
                }
            }
        }
        for name in bundleNames {
            let bytes = try Self.bytes(name)
            c.bundles.append(bytes)
            let results = try XCResultParser.parse(bytes)
            for r in results { add(SuiteID(module: r.target, name: r.suite), Self.unitName(r.name)) }
            c.logs.append(FuzzCorpus.lines(Self.unitOutput(results, bundle: bytes)))
        }
        c.enumerations = [try Self.bytes("enumerate-tests-flat-json-xcode16-trimmed.json")]
        for name in xctestrunNames {
            c.xctestruns.append(try Self.bytes(name))
            // Converted once and kept: Foundation writes a dictionary's keys in the process's hash order, so a
            // conversion here would give each run other inputs.
            let file = name.split(separator: "/").last.map(String.init) ?? name
            c.binaryXctestruns.append(try Self.bytes("binary/\(file).bplist"))
        }
        c.unit = FuzzShard.xcodebuildUnit(tests)
        c.testCount = c.unit.testIDs.count
        return c
    }

    /// `testA()` in a bundle is `testA` in a unit (as `-only-testing:` names it); Swift Testing keeps its `f(x:)`.
    static func unitName(_ bundleName: String) -> String {
        bundleName.hasPrefix("test") && bundleName.hasSuffix("()") ? String(bundleName.dropLast(2)) : bundleName
    }

    /// What a unit of the bundle's tests prints: its console lines in xcodebuild's form, then the bundle between
    /// the marker lines. The console calls the first failed test passed and the last test crashes, so the bundle
    /// has a verdict to correct and one to add.
    static func unitOutput(_ results: [XCResultParser.BundleTest], bundle: [UInt8]) -> [UInt8] {
        var out = "Test Suite 'Selected tests' started at 2026-01-11 14:12:06.123.\n"
        var corrected = false
        for (i, r) in results.enumerated() {
            let q = "-[\(r.target).\(r.suite) \(unitName(r.name))]"
            out += "Test Case '\(q)' started.\n"
            if i == results.count - 1 {
                out += "Restarting after unexpected exit, crash, or test timeout in \(q); summary will include totals from previous launches.\n"
                continue
            }
            if r.status == .failed {
                for issue in r.issues {
                    out += "\(issue.location.map { "\($0.file):\($0.line)" } ?? "<unknown>:0"): error: \(q) : \(issue.message)\n"
                }
            }
            if r.status == .skipped { out += "/Users/me/App/Tests.swift:9: \(q) : Test skipped - \(r.skipReason ?? "")\n" }
            var status = r.status.rawValue
            if r.status == .failed, !corrected {
                status = "passed"
                corrected = true
            }
            out += "Test Case '\(q)' \(status) (\(String(format: "%.3f", r.duration)) seconds).\n"
        }
        out += "Test Suite 'Selected tests' failed at 2026-01-11 14:12:07.456.\n"
        out += "     Executed \(results.count) tests, with 1 failure (0 unexpected) in 0.500 (0.510) seconds\n"
        return Array((out + XcodebuildRunner.bundleBegin + "\n").utf8) + bundle + Array("\n\n\(XcodebuildRunner.bundleEnd)\n".utf8)
    }
}

/// A Test Case node of a generated result bundle and what `XCResultParser` must read from it (nil: nothing).
struct BundleCase {
    var json: String
    var result: XCResultParser.BundleTest?
}

/// A test of a generated xcodebuild stream: where it is, and what its console lines said.
struct PlannedTest {
    var id: TestID
    var suitePath: [String]
    var bundleName: String
    var consoleStatus: TestStatus?
}

extension FuzzShard {
    static let xcodebuildBytes = Array("Test Case '-[T.C m]' case 'C.m()' started. passed failed skipped on 'Clone 1 of (0.1 seconds).: error:".utf8)
    static let devices = ["iPhone 16 - App", "iPhone 13 mini - xctest", "iPad (10th generation) - Runner", "My Mac - App"]
    static let executedIndents = ["\t ", " ", "     "]

    /// A unit of these suites' tests, ordered by suite name (a unit holds at least one item: an empty one then).
    static func xcodebuildUnit(_ suites: [SuiteID: [String]]) -> WorkUnit {
        let items = suites.isEmpty ? [(key: SuiteID(module: "M", name: "Empty"), value: [String]())] : suites.sorted { $0.key.name < $1.key.name }
        return WorkUnit(id: 1, items: items.map { suite, tests in
            WorkItem(suite: suite, framework: .xcodebuild, destination: "local", tests: tests, isWholeSuite: true,
                     estimate: 1, source: .noHistory(secondsPerTest: 0.1))
        })
    }

    static func xcodebuildParser(_ suites: [SuiteID: [String]]) -> XcodebuildOutputParser {
        XcodebuildOutputParser(unit: xcodebuildUnit(suites))
    }

    // MARK: (a) lines: random bytes, mutated capture lines, templates

    mutating func xcodebuildLineInput() -> FuzzInput {
        let captures = FuzzInput.Target.xcodebuild(xcodebuildCaptureParser, tests: corpus.xcodebuild.testCount)
        switch rng.below(10) {
        case 0..<3:
            var input = randomBytesInput()
            if rng.chance(60) {
                input.stdout = (0..<rng.range(0...64)).map { _ in Self.xcodebuildBytes[rng.below(Self.xcodebuildBytes.count)] }
            }
            input.target = captures
            return input
        case 3..<6:
            var bytes = window(corpus.xcodebuild.logs, maxLines: 2)
            mutate(&bytes, times: rng.range(1...3))
            return FuzzInput(target: captures, stdout: bytes)
        default:
            return xcodebuildFragment()
        }
    }

    /// One to three xcodebuild console lines from templates: serial and parallel test lines, issue, skip and
    /// measurement lines, summaries, the bundle's marker lines around a small bundle; odd names and numbers.
    mutating func xcodebuildFragment() -> FuzzInput {
        let weird = ["", ".", "-[", "]", " ", "'", "A.b", "()", "x y"]
        let target = rng.chance(10) ? rng.pick(weird) : identifier(6)
        let cls = rng.chance(10) ? rng.pick(weird) : identifier(6) + "Tests"
        let method = rng.chance(10) ? rng.pick(weird) : "test" + identifier(6)
        let qualified = rng.chance(8) ? rng.pick([target, cls, "\(target).", ".\(cls)", "\(target).\(cls).x"]) : "\(target).\(cls)"
        let number = rng.chance(25) ? String(decoding: rng.pick(Self.specialNumbers), as: UTF8.self) : decimal()
        let status = rng.pick(["started", "passed", "failed", "skipped", "measured", "", "passed"])
        let test = "-[\(qualified) \(method)]"
        var lines: [String] = []
        switch rng.below(11) {
        case 0, 1:
            let end = rng.pick([".", " (\(number) seconds).", " (\(number) seconds)", "", " (\(number) seconds"])
            lines.append("Test Case '\(test)' \(status)\(end)")
        case 2, 3:
            let args = rng.pick(["()", "", "(x:)", "()()"])
            let clone = rng.chance(90) ? "'Clone \(rng.range(1...9)) of \(rng.pick(Self.devices)) (\(rng.range(1...99999)))'" : prose()
            let time = rng.chance(90) ? " (\(number) seconds)" : rng.pick(["", " (", ")", " (seconds)"])
            lines.append("Test case '\(cls).\(method)\(args)' \(status) on \(clone)\(time)")
        case 4:
            lines.append("/p/\(cls).swift:\(number): error: \(test) : \(prose())")
            if rng.chance(30) { lines.append(prose()) }
        case 5:
            lines.append("/p/\(cls).swift:\(number): \(test) : Test skipped\(rng.pick(["", " - ", ": ", " -"]))\(prose())")
        case 6:
            lines.append("""
                /p/F.swift:\(number): Test Case '\(test)' measured [Time, seconds] average: \(number), relative standard \
                deviation: \(number)%, values: [\(decimal()), \(number)], performanceMetricID:com.apple.XCTPerformanceMetric_WallClockTime, \
                maxPercentRelativeStandardDeviation: \(number)%, maxStandardDeviation: \(number)
                """)
        case 7:
            lines.append("Test Suite '\(cls)' \(rng.pick(["passed", "failed", "started"])) at \(timestamp()).")
            lines.append("\(rng.pick(Self.executedIndents))Executed \(rng.below(5)) tests, with 0 failures (0 unexpected) in \(number) (\(decimal())) seconds")
        case 8:
            // A small result bundle, whole or cut, its markers alone or doubled.
            let unitName = XcodebuildCorpus.unitName(method + "()")
            let plan = [PlannedTest(id: TestID(suite: SuiteID(module: target, name: cls), name: unitName), suitePath: [cls],
                                    bundleName: method + rng.pick(["()", ""]), consoleStatus: nil)]
            let tree = resultTree(plan.map { bundleCase(target: target, test: $0, status: rng.pick([TestStatus.passed, .failed, .skipped])) })
            if rng.chance(80) { lines.append(XcodebuildRunner.bundleBegin) }
            lines.append(rng.chance(80) ? tree.json : String(tree.json.prefix(rng.below(tree.json.count + 1))))
            if rng.chance(80) { lines.append(XcodebuildRunner.bundleEnd) }
        case 9:
            lines.append("Restarting after unexpected exit, crash, or test timeout in \(test); summary will include totals from previous launches.")
        default:
            lines.append(rng.chance(50) ? "\(prose()) \(test) \(prose())" : "◇ Test \(method)() \(status).")
        }
        var stdout = Array(lines.joined(separator: "\n").utf8)
        if rng.chance(80) { stdout.append(0x0A) }
        if rng.chance(20) { mutate(&stdout, times: 1) }
        var stderr: [UInt8] = []
        if rng.chance(5) { stderr = Array("\(cls).swift:\(number): Fatal error: \(prose())\n".utf8) }
        let parser = Self.xcodebuildParser(cls.isEmpty || method.isEmpty ? [:] : [SuiteID(module: target, name: cls): [method]])
        return FuzzInput(target: .xcodebuild(parser, tests: 1), stdout: stdout, stderr: stderr)
    }

    // MARK: (b) mutated captures

    /// A window of a real log or of a whole unit output (console and bundle), mutated.
    mutating func xcodebuildCaptureInput() -> FuzzInput {
        var stdout = window(corpus.xcodebuild.logs, maxLines: 8, wholeFile: 15)
        mutate(&stdout, times: rng.range(1...4), limit: 16_384)
        var input = FuzzInput(target: .xcodebuild(xcodebuildCaptureParser, tests: corpus.xcodebuild.testCount), stdout: stdout)
        if rng.chance(15) { input.stderr = window(corpus.xctestErr, maxLines: 4) }
        return input
    }

    // MARK: (c) generated streams

    /// A unit's whole output: console lines of XCTest classes, serial (`Test Case '-[Target.Class method]' …`) or
    /// from parallel clones (`Test case 'Class.method()' passed on 'Clone 1 of …' (…)`), Swift Testing tests the
    /// console does not report, a test that crashes, then (mostly) the result bundle, which agrees with the console
    /// or corrects it. Well-formed ones carry the exact events they must give, the bundle's corrections included.
    mutating func xcodebuildStream(wellFormed: Bool) -> FuzzInput {
        let target = identifier() + "Tests"
        let parallel = rng.chance(25)
        var lines: [String] = []
        var expected: [TestEvent] = []
        var plan: [PlannedTest] = []
        var unitSuites: [SuiteID: [String]] = [:]
        var consoleFailing: Set<TestID> = []
        var consoleStarted: Set<TestID> = []
        // Serial output comes class by class; clones' blocks come in any order.
        var blocks: [[StreamLine]] = []
        var crashed = false
        if !parallel { lines.append("Test Suite 'Selected tests' started at \(timestamp()).") }
        for c in 0..<rng.range(1...2) {
            let cls = identifier() + "Tests\(c)"
            let suite = SuiteID(module: target, name: cls)
            if !parallel { lines.append("Test Suite '\(cls)' started at \(timestamp()).") }
            let count = rng.range(1...3)
            var failures = 0
            for m in 0..<count {
                let method = "test" + identifier() + "\(m)"
                let id = TestID(suite: suite, name: method)
                unitSuites[suite, default: []].append(method)
                let q = "-[\(target).\(cls) \(method)]"
                var block: [StreamLine] = []
                var planned = PlannedTest(id: id, suitePath: [cls], bundleName: method + (rng.chance(90) ? "()" : ""), consoleStatus: nil)
                // One test a stream may crash: the console never ends it.
                let crash = !crashed && rng.chance(8)
                if crash {
                    crashed = true
                    if !parallel {
                        block.append(StreamLine("Test Case '\(q)' started.", .started(id)))
                        consoleStarted.insert(id)
                        block.append(StreamLine("Restarting after unexpected exit, crash, or test timeout in \(q); summary will include totals from previous launches.", nil))
                    }
                    plan.append(planned)
                    blocks.append(block)
                    continue
                }
                if !parallel {
                    block.append(StreamLine("Test Case '\(q)' started.", .started(id)))
                    consoleStarted.insert(id)
                    if rng.chance(10) { block.append(StreamLine(prose(), nil)) } // the test's own print()
                }
                var status = TestStatus.passed
                var reason: String?
                switch rng.below(20) {
                case 0..<5:
                    status = .failed
                    consoleFailing.insert(id)
                    for _ in 0..<rng.range(1...2) {
                        let place = FanoutCore.SourceLocation(file: "/Users/me/\(identifier()).swift", line: rng.range(1...9999))
                        let (kind, head): (FanoutCore.Issue.Kind, String) = switch rng.below(3) {
                        case 0: (.assertion, "XCTAssertEqual failed: (\"\(rng.below(9))\") is not equal to (\"\(rng.below(9))\") - ")
                        case 1: (.expectationTimeout, "Asynchronous wait failed: Exceeded timeout of 0.2 seconds, with unfulfilled expectations: ")
                        default: (.assertion, "XCTAssertTrue failed - ")
                        }
                        var message = head + prose()
                        var text = ["\(place.file):\(place.line): error: \(q) : \(message)"]
                        for _ in 0..<(rng.chance(20) ? rng.range(1...2) : 0) {
                            let more = prose()
                            text.append(more)
                            message += "\n" + more
                        }
                        // The issue is complete when the next line of XCTest's comes: its event goes with the last line.
                        for t in text.dropLast() { block.append(StreamLine(t, nil)) }
                        block.append(StreamLine(text[text.count - 1], .issue(id, FanoutCore.Issue(kind: kind, message: message, location: place))))
                    }
                case 5:
                    status = .failed
                    consoleFailing.insert(id)
                    let message = "threw error \"\(identifier())\""
                    block.append(StreamLine("<unknown>:0: error: \(q) : \(message)", .issue(id, FanoutCore.Issue(kind: .thrown, message: message))))
                case 6..<9:
                    status = .skipped
                    let why = prose()
                    reason = why
                    block.append(StreamLine("/Users/me/\(identifier()).swift:\(rng.range(1...999)): \(q) : Test skipped - \(why)", nil))
                case 9..<11:
                    let place = FanoutCore.SourceLocation(file: "/Users/me/\(identifier()).swift", line: rng.range(1...9999))
                    let texts = (0..<rng.range(1...5)).map { _ in decimal(maxWhole: 2) }
                    let average = decimal(maxWhole: 2), rsd = decimal(maxWhole: 200)
                    let line = """
                        \(place.file):\(place.line): Test Case '\(q)' measured [Time, seconds] average: \(average), \
                        relative standard deviation: \(rsd)%, values: [\(texts.joined(separator: ", "))], \
                        performanceMetricID:com.apple.XCTPerformanceMetric_WallClockTime, baselineName: "", \
                        baselineAverage: , polarity: prefers smaller, maxPercentRegression: 10.000%, \
                        maxPercentRelativeStandardDeviation: 10.000%, maxRegression: 0.100, maxStandardDeviation: 0.100
                        """
                    block.append(StreamLine(line, .measured(FanoutCore.Measurement(
                        test: id, metric: "Time", unit: "seconds", identifier: "com.apple.XCTPerformanceMetric_WallClockTime",
                        values: texts.compactMap { Double($0) }, average: Double(average) ?? -1,
                        relativeStandardDeviation: Double(rsd) ?? -1, maxPercentRelativeStandardDeviation: 10,
                        maxStandardDeviation: 0.1, location: place))))
                default:
                    break
                }
                if status == .failed { failures += 1 }
                let duration = decimal(maxWhole: rng.chance(90) ? 10 : 100_000)
                let end = parallel
                    ? "Test case '\(cls).\(method)()' \(status.rawValue) on 'Clone \(rng.range(1...4)) of \(rng.pick(Self.devices)) (\(rng.range(100...99999)))' (\(duration) seconds)"
                    : "Test Case '\(q)' \(status.rawValue) (\(duration) seconds)."
                block.append(StreamLine(end, .ended(id, status, duration: Double(duration) ?? -1, reason: reason)))
                planned.consoleStatus = status
                plan.append(planned)
                blocks.append(block)
            }
            if !parallel {
                for block in blocks { lines += block.map(\.text); expected += block.compactMap(\.event) }
                blocks = []
                lines.append("Test Suite '\(cls)' \(failures > 0 ? "failed" : "passed") at \(timestamp()).")
                let total = decimal(maxWhole: 1000)
                lines.append("""
                    \(rng.pick(Self.executedIndents))Executed \(count) test\(count == 1 ? "" : "s"), with \(failures) \
                    failure\(failures == 1 ? "" : "s") (0 unexpected) in \(decimal()) (\(total)) seconds
                    """)
                expected.append(.suiteEnded(suite, duration: Double(total) ?? -1))
            } else {
                blocks.insert([StreamLine("Test suite '\(cls)' started on 'Clone 1 of \(rng.pick(Self.devices)) (\(rng.range(100...999)))'", nil)], at: 0)
            }
        }
        if parallel {
            for i in blocks.indices.reversed() { blocks.swapAt(i, rng.below(i + 1)) }
            for block in blocks { lines += block.map(\.text); expected += block.compactMap(\.event) }
        }
        // Swift Testing tests: only the bundle reports them (the console's lines for them are not XCTest's).
        if rng.chance(30) {
            let path = (0..<rng.range(1...2)).map { _ in identifier() + "Suite" }
            let suite = SuiteID(module: target, name: path.joined(separator: "/"))
            for t in 0..<rng.range(1...2) {
                let name = identifier() + "\(t)" + rng.pick(["()", "(x:)", "(_:)"])
                unitSuites[suite, default: []].append(name)
                plan.append(PlannedTest(id: TestID(suite: suite, name: name), suitePath: path, bundleName: name, consoleStatus: nil))
                if !parallel, rng.chance(50) {
                    lines.append("◇ Test \(name) started.")
                    lines.append("✔ Test \(name) passed after 0.001 seconds.")
                }
            }
        }
        if rng.chance(75) {
            // The bundle: mostly the console's verdicts, some corrected, a test missing, one of another unit.
            var cases: [BundleCase] = []
            var bundled: [TestID: XCResultParser.BundleTest] = [:]
            for test in plan where rng.chance(92) {
                var status = rng.pick([TestStatus.passed, .failed, .skipped])
                if let console = test.consoleStatus, rng.chance(80) { status = console }
                let c = bundleCase(target: target, test: test, status: status)
                cases.append(c)
                bundled[test.id] = c.result
            }
            if rng.chance(20) {
                let other = PlannedTest(id: TestID(suite: SuiteID(module: target, name: "Other"), name: "testOther"),
                                        suitePath: ["Other"], bundleName: "testOther()", consoleStatus: nil)
                cases.insert(bundleCase(target: target, test: other, status: .failed), at: rng.below(cases.count + 1))
            }
            for i in cases.indices.reversed() { cases.swapAt(i, rng.below(i + 1)) }
            let tree = resultTree(cases)
            lines.append(XcodebuildRunner.bundleBegin)
            let noBundle = rng.chance(5) // xcodebuild died before writing one: xcresulttool prints nothing
            if !noBundle { lines.append(rng.chance(50) ? Self.pretty(tree.json) : tree.json) }
            lines.append("")
            lines.append(XcodebuildRunner.bundleEnd)
            if !noBundle {
                // The corrections, in the unit's order: a start only for a test the console never reported.
                let order = unitSuites.sorted { $0.key.name < $1.key.name }.flatMap { s, tests in tests.map { TestID(suite: s, name: $0) } }
                for id in order {
                    guard let r = bundled[id], r.status != plan.first(where: { $0.id == id })?.consoleStatus else { continue }
                    if !consoleStarted.contains(id), plan.first(where: { $0.id == id })?.consoleStatus == nil { expected.append(.started(id)) }
                    if !consoleFailing.contains(id) { expected += r.issues.map { .issue(id, $0) } }
                    expected.append(.ended(id, r.status, duration: r.duration, reason: r.status == .skipped ? r.skipReason : nil))
                }
            }
        }
        let newline = rng.chance(15) ? "\r\n" : "\n"
        var text = lines.joined(separator: newline)
        if rng.chance(80) { text += newline }
        var input = FuzzInput(target: .xcodebuild(Self.xcodebuildParser(unitSuites), tests: plan.count), stdout: Array(text.utf8))
        if wellFormed {
            input.expected = expected
            return input
        }
        damage(&input, lines: lines, newline: newline)
        if rng.chance(20) {
            input.stderr = Array("\(identifier()).swift:\(rng.range(0...99)): Fatal error: \(prose())\n".utf8)
            if rng.chance(50) { input.stderr += window(corpus.xctestErr, maxLines: 8) }
        }
        return input
    }

    /// Compact JSON laid out on many lines as xcresulttool prints it (a line break after each `{`, `[` and `,`
    /// outside strings).
    static func pretty(_ json: String) -> String {
        var out: [UInt8] = []
        var inString = false, escaped = false
        for b in json.utf8 {
            out.append(b)
            if inString {
                if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == UInt8(ascii: "\"") { inString = false }
            } else if b == UInt8(ascii: "\"") {
                inString = true
            } else if b == UInt8(ascii: "{") || b == UInt8(ascii: "[") || b == UInt8(ascii: ",") {
                out += Array("\n  ".utf8)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Result bundles

    /// A failure message's text and the issue it is: `File.swift:12: message` or a message alone.
    mutating func failureMessage(isFailure: Bool) -> (text: String, issue: FanoutCore.Issue) {
        let (kind, body): (FanoutCore.Issue.Kind, String) = switch rng.below(6) {
        case 0: (.assertion, "XCTAssertEqual failed: (\"\(rng.below(9))\") is not equal to (\"\(rng.below(9))\")")
        case 1: (.expectationTimeout, "Asynchronous wait failed: Exceeded timeout of 1 seconds, with unfulfilled expectations: \"\(prose())\".")
        case 2: (.crash, "Crash: \(identifier()) at \(identifier())()")
        case 3: (.thrown, "Caught error: threw error \"\(identifier())\"")
        case 4: (.assertion, "Expectation failed: (a → \(rng.below(9))) == \(rng.below(9))")
        default: (.assertion, prose())
        }
        guard rng.chance(70) else { return (body, FanoutCore.Issue(kind: kind, message: body, isFailure: isFailure)) }
        let place = FanoutCore.SourceLocation(file: identifier() + ".swift", line: rng.range(1...9999))
        return ("\(place.file):\(place.line): \(body)", FanoutCore.Issue(kind: kind, message: body, location: place, isFailure: isFailure))
    }

    /// `duration` as xcresulttool prints it (in the Mac's locale), sometimes what no clock measures.
    mutating func durationText() -> String {
        switch rng.below(8) {
        case 0: "\(rng.below(60))m \(rng.below(60))s"
        case 1: "\(rng.below(3))h \(rng.below(60))m \(rng.below(60))s"
        case 2: "\(rng.below(1000))ms"
        case 3: rng.pick(["1e308h 1e308h", "1e999s", "-1s", "nan", "", "s", "5", "1.5.5s", "∞s", "1.7976931348623157e308m"])
        default: decimal(maxWhole: 9).replacingOccurrences(of: ".", with: ",") + "s"
        }
    }

    /// The seconds a `duration` text stands for: each `<number><unit>` part (ms, h, m, s), a comma a decimal point;
    /// what no clock measures (infinite, negative) stands for none.
    static func durationSeconds(_ text: String) -> Double {
        var total = 0.0
        for part in text.replacingOccurrences(of: ",", with: ".").split(separator: " ") {
            let units: [(String, Double)] = [("ms", 0.001), ("h", 3600), ("m", 60), ("s", 1)]
            guard let (suffix, factor) = units.first(where: { part.hasSuffix($0.0) }),
                  let value = Double(part.dropLast(suffix.count)), value.isFinite, value >= 0 else { continue }
            total += value * factor
        }
        return total.isFinite ? total : 0
    }

    /// A Test Case node for `test` with this verdict (or an unknown one), children that are failure messages at
    /// various depths and other nodes, and the result `XCResultParser` must read from it.
    mutating func bundleCase(target: String, test: PlannedTest, status: TestStatus?) -> BundleCase {
        let resultText: String?
        var isFailure = status == .failed
        switch status {
        case .passed?:
            // An expected failure passes; its messages are known issues.
            resultText = rng.chance(85) ? "Passed" : "Expected Failure"
        case .failed?: resultText = "Failed"
        case .skipped?: resultText = "Skipped"
        case nil: resultText = rng.chance(80) ? rng.pick(["Mixed", "Unknown", "", "passed", "Expected failure"]) : nil
        }
        if resultText == "Passed" { isFailure = false }
        var fields = [Field("nodeType", "\"Test Case\""), Field("result", resultText.map { json($0) })]
        // The name: from the identifier's last part, else the node's name.
        let identifier = test.suitePath.joined(separator: "/") + "/" + test.bundleName
        switch rng.below(10) {
        case 0:
            fields.append(Field("name", json(test.bundleName)))
        case 1:
            fields.append(Field("name", json(test.bundleName)))
            fields.append(Field("nodeIdentifier", json(test.bundleName)))
        default:
            fields.append(Field("name", json(rng.chance(90) ? test.bundleName : prose())))
            fields.append(Field("nodeIdentifier", json(identifier)))
        }
        if rng.chance(50) { fields.append(Field("nodeIdentifierURL", json("test://com.apple.xcode/App/\(target)/\(identifier)"))) }
        var seconds = 0.0
        let duration = durationText()
        switch rng.below(10) {
        case 0..<7:
            let text = decimal(maxWhole: rng.chance(95) ? 10 : 100_000)
            seconds = Double(text) ?? 0
            fields.append(Field("durationInSeconds", text))
            fields.append(Field("duration", json(duration)))
        case 7:
            // Seconds no clock measures: the text stands instead.
            fields.append(Field("durationInSeconds", rng.pick(["-1", "-0.5"])))
            fields.append(Field("duration", json(duration)))
            seconds = Self.durationSeconds(duration)
        case 8:
            fields.append(Field("duration", json(duration)))
            seconds = Self.durationSeconds(duration)
        default:
            break
        }
        // Children: failure messages directly or under Repetition/Arguments/Device nodes; the reader looks eight
        // levels deep.
        var children: [String] = []
        var issues: [FanoutCore.Issue] = []
        var skipReason: String?
        for _ in 0..<(rng.chance(60) ? rng.range(1...3) : 0) {
            // Under this many other nodes; the reader looks no deeper than under seven.
            let levels = rng.chance(60) ? 0 : rng.chance(95) ? rng.range(1...3) : rng.range(6...9)
            let seen = levels <= 7
            var node: String
            if status == .skipped, rng.chance(70) {
                let why = prose()
                node = object([Field("name", json("Test skipped - \(why)")), Field("nodeType", "\"Failure Message\"")])
                if seen, skipReason == nil { skipReason = why }
            } else {
                let message = failureMessage(isFailure: isFailure)
                node = object([Field("name", json(message.text)), Field("nodeType", "\"Failure Message\"")])
                if seen, status == .skipped {
                    // A skipped test's first message is its reason, whatever it says.
                    if skipReason == nil { skipReason = message.text }
                } else if seen {
                    issues.append(message.issue)
                }
            }
            for level in 0..<levels {
                let type = rng.pick(["Repetition", "Arguments", "Device", "Test Value"])
                node = object([Field("name", json("\(type) \(level)")), Field("nodeType", json(type)), Field("children", "[" + node + "]")])
            }
            children.append(node)
        }
        if rng.chance(10) { children.append(object([Field("name", json("iPhone 17 Pro")), Field("nodeType", "\"Device\"")])) }
        if !children.isEmpty { fields.append(Field("children", "[" + children.joined(separator: ",") + "]")) }
        let bundleStatus: TestStatus? = switch resultText {
        case "Passed", "Expected Failure": .passed
        case "Failed": .failed
        case "Skipped": .skipped
        default: nil
        }
        let read = XCResultParser.BundleTest(target: target, suite: test.suitePath.joined(separator: "/"), name: test.bundleName,
                                        status: bundleStatus ?? .passed, duration: seconds, issues: issues,
                                        skipReason: bundleStatus == .skipped ? skipReason : nil)
        return BundleCase(json: object(fields), result: bundleStatus == nil ? nil : read)
    }

    /// A whole `test-results tests` JSON of these cases, grouped by target and suite as xcresulttool does, with
    /// nodes the reader must pass over (a case outside any suite or bundle, an unnamed bundle, other node types),
    /// and the results it must give, in order.
    mutating func resultTree(_ cases: [BundleCase], target: String? = nil) -> (json: String, expected: [XCResultParser.BundleTest]) {
        var targets: [String] = []
        var groups: [String: [(suite: String, cases: [BundleCase])]] = [:]
        for c in cases {
            guard let r = c.result else {
                // An unknown verdict: any suite, the reader skips it.
                let t = target ?? targets.first ?? "T"
                if groups[t] == nil { targets.append(t) }
                groups[t, default: []].append((suite: "Skipped", cases: [c]))
                continue
            }
            if groups[r.target] == nil { targets.append(r.target) }
            if let i = groups[r.target]?.firstIndex(where: { $0.suite == r.suite }) {
                groups[r.target]?[i].cases.append(c)
            } else {
                groups[r.target, default: []].append((suite: r.suite, cases: [c]))
            }
        }
        var expected: [XCResultParser.BundleTest] = []
        var bundles: [String] = []
        for t in targets {
            var suites: [String] = []
            var results: [[XCResultParser.BundleTest]] = []
            for group in groups[t] ?? [] {
                var node = "[" + group.cases.map(\.json).joined(separator: ",") + "]"
                for name in group.suite.split(separator: "/", omittingEmptySubsequences: false).reversed() {
                    node = "[" + object([Field("name", json(String(name))), Field("nodeType", "\"Test Suite\""),
                                         Field("result", rng.chance(50) ? "\"Failed\"" : nil), Field("children", node)]) + "]"
                }
                var suite = String(node.dropFirst().dropLast())
                if rng.chance(10) { suite = object([Field("name", json(prose())), Field("nodeType", "\"Test Group\""), Field("children", "[" + suite + "]")]) }
                suites.append(suite)
                results.append(group.cases.compactMap(\.result))
            }
            if rng.chance(10) {
                // A case straight under the bundle: a Swift Testing function outside any suite, in the target's
                // top-level suite.
                let stray = PlannedTest(id: TestID(suite: SuiteID(module: t, name: "S"), name: "x"), suitePath: [], bundleName: "testStray()", consoleStatus: nil)
                let c = bundleCase(target: t, test: stray, status: .failed)
                let at = rng.below(suites.count + 1)
                suites.insert(c.json, at: at)
                results.insert(c.result.map { r in var r = r; r.suite = SuiteID.swiftTestingTopLevel; return [r] } ?? [], at: at)
            }
            expected += results.flatMap { $0 }
            bundles.append(object([Field("name", json(t)), Field("nodeType", json(rng.chance(80) ? "Unit test bundle" : "UI test bundle")),
                                   Field("result", "\"Failed\""), Field("children", "[" + suites.joined(separator: ",") + "]")]))
        }
        if rng.chance(5) {
            // A bundle without a name: its cases have no target.
            let test = PlannedTest(id: TestID(suite: SuiteID(module: "", name: "S"), name: "x"), suitePath: ["S"], bundleName: "testNoTarget()", consoleStatus: nil)
            let suite = object([Field("name", "\"S\""), Field("nodeType", "\"Test Suite\""),
                                Field("children", "[" + bundleCase(target: "", test: test, status: .failed).json + "]")])
            bundles.insert(object([Field("nodeType", "\"Unit test bundle\""), Field("children", "[" + suite + "]")]), at: rng.below(bundles.count + 1))
        }
        let plan = object([Field("name", json(prose())), Field("nodeType", "\"Test Plan\""), Field("result", "\"Failed\""),
                           Field("children", "[" + bundles.joined(separator: ",") + "]")])
        let root = object([
            Field("testNodes", "[" + plan + "]"),
            Field("devices", rng.chance(70) ? #"[{"deviceName":"iPhone 17 Pro","platform":"iOS Simulator","osVersion":"26.2"}]"# : nil),
            Field("testPlanConfigurations", rng.chance(50) ? #"[{"configurationName":"Test Scheme Action","configurationId":"1"}]"# : nil),
        ])
        return (root, expected)
    }

    /// `xcresulttool get test-results tests` JSON: generated trees checked against what they hold, the real
    /// files mutated, random JSON, nesting at the limit. Any text is read or rejected, never a trap.
    mutating func fuzzResultBundle() {
        result.bundles += 1
        var bytes: [UInt8]
        var expected: [XCResultParser.BundleTest]?
        let roll = rng.below(20)
        switch roll {
        case 0..<6, 12..<15:
            let target = identifier() + "Tests"
            var cases: [BundleCase] = []
            for s in 0..<rng.range(1...2) {
                let path = (0..<(rng.chance(80) ? 1 : 2)).map { _ in identifier() + "Tests\(s)" }
                for t in 0..<rng.range(1...3) {
                    let name = "test" + identifier() + "\(t)" + rng.pick(["()", "()", "", "(x:)"])
                    let test = PlannedTest(id: TestID(suite: SuiteID(module: target, name: path.joined(separator: "/")), name: name),
                                           suitePath: path, bundleName: name, consoleStatus: nil)
                    let status: TestStatus? = rng.chance(95) ? rng.pick([TestStatus.passed, .failed, .skipped]) : nil
                    cases.append(bundleCase(target: target, test: test, status: status))
                }
            }
            let tree = resultTree(cases, target: target)
            bytes = Array((rng.chance(30) ? Self.pretty(tree.json) : tree.json).utf8)
            if rng.chance(10) { bytes = Array("xcresulttool: \(prose())\n".utf8) + bytes }
            if roll >= 12 {
                mutate(&bytes, times: rng.range(1...3), limit: 16_384)
            } else {
                expected = tree.expected
            }
        case 6..<12:
            bytes = rng.pick(corpus.xcodebuild.bundles)
            mutate(&bytes, times: rng.range(1...4), limit: 16_384)
        case 15:
            bytes = rng.chance(50) ? Array(randomJSON(0).utf8) : (0..<rng.range(0...64)).map { _ in Self.jsonBytes[rng.below(Self.jsonBytes.count)] }
        case 16:
            // Nesting around the reader's limit (64) and Foundation's (512), balanced or left open.
            let depth = rng.pick([30, 31, 32, 33, 63, 64, 65, 256, 511, 512, 513])
            let open = String(repeating: #"{"nodeType":"Test Suite","name":"S","children":["#, count: depth / 2)
            let close = rng.chance(50) ? String(repeating: "]}", count: depth / 2) : ""
            bytes = Array(#"{"testNodes":["#.utf8) + Array(open.utf8) + Array(close.utf8) + (close.isEmpty ? [] : Array("]}".utf8))
        case 17:
            var lines = FuzzCorpus.lines(rng.pick(corpus.xcodebuild.bundles))
            let start = rng.below(lines.count)
            lines = Array(lines[start..<min(lines.count, start + rng.range(1...40))])
            bytes = lines.flatMap { $0 }
        default:
            bytes = rng.pick(corpus.xcodebuild.bundles)
        }
        traceInput(bytes)
        do {
            let results = try XCResultParser.parse(bytes)
            if let expected, results != expected {
                fail(.xcresult, "the bundle gave other results than it holds\n  got:      \(results)\n  expected: \(expected)", FuzzInput(target: .swiftTesting, stdout: bytes))
            }
            if expected != nil { result.ran(.resultBundle) }
            for r in results {
                var problem: String?
                if r.name.isEmpty { problem = "a test without a name" }
                if !r.duration.isFinite || r.duration < 0 { problem = "test duration \(r.duration)" }
                if r.status == .skipped, !r.issues.isEmpty { problem = "a skipped test with issues" }
                if r.status != .skipped, r.skipReason != nil { problem = "a \(r.status) test with a skip reason" }
                if r.issues.contains(where: { $0.location.map { $0.file.isEmpty || $0.line < 1 } ?? false }) { problem = "an issue at no real place" }
                if let problem { fail(.xcresult, "\(problem): \(r)", FuzzInput(target: .swiftTesting, stdout: bytes)) }
            }
        } catch {
            result.bundlesThrown += 1
            if expected != nil {
                fail(.xcresult, "a well-formed bundle was rejected: \(error)", FuzzInput(target: .swiftTesting, stdout: bytes))
            }
        }
    }

    // MARK: Test lists and .xctestrun files

    mutating func fuzzXcodeListing() {
        result.listings += 1
        if rng.chance(50) { fuzzTestEnumeration() } else { fuzzXCTestRunFile() }
    }

    static let oddIdentifiers = ["T/C", "T//m", "/C/m", "T/C/", "T/A/B/f()", "T/C/m/x", "", "a", "T/C/m", "T/C/m", "é/日/ß()"]

    /// `xcodebuild -enumerate-tests` output: generated lists checked against what they hold, the real one mutated,
    /// one identifier a line, nesting at the limit, random bytes.
    mutating func fuzzTestEnumeration() {
        var bytes: [UInt8]
        var expected: [TestSuite]?
        var expectThrow = false
        switch rng.below(20) {
        case 0..<6:
            let target = identifier()
            let classes = (0..<rng.range(1...3)).map { _ in identifier() + "Tests" }
            func identifiers() -> [String] {
                (0..<rng.range(0...4)).map { _ in
                    rng.chance(85) ? "\(target)/\(rng.pick(classes))/test\(rng.below(4))\(rng.chance(20) ? "()" : "")" : rng.pick(Self.oddIdentifiers)
                }
            }
            func entries(_ list: [String]) -> String {
                "[" + list.map { #"{"identifier":"# + json($0) + "}" }.joined(separator: ",") + "]"
            }
            var enabled: [String] = []
            var values: [String] = []
            for _ in 0..<(rng.chance(90) ? 1 : 2) {
                let on = identifiers(), off = identifiers()
                enabled += on
                values.append(object([Field("enabledTests", entries(on)), Field("disabledTests", entries(off)),
                                      Field("testPlan", json(prose()))]))
            }
            let errors = rng.chance(20) ? [json("Unable to find a destination matching \(prose())")] : []
            let text = object([Field("errors", "[" + errors.joined(separator: ",") + "]"), Field("values", "[" + values.joined(separator: ",") + "]")])
            bytes = Array((rng.chance(30) ? Self.pretty(text) : text).utf8)
            if rng.chance(15) { mutate(&bytes, times: 1) } else {
                expectThrow = enabled.isEmpty && !errors.isEmpty
                expected = Self.expectedSuites(enabled)
            }
        case 6..<12:
            bytes = rng.pick(corpus.xcodebuild.enumerations)
            mutate(&bytes, times: rng.range(1...4), limit: 32_768)
        case 12..<15:
            let lines = (0..<rng.range(0...6)).map { _ in rng.chance(70) ? "\(identifier())/\(identifier())/test\(identifier())" : rng.pick(Self.oddIdentifiers) }
            bytes = Array(lines.joined(separator: rng.pick(["\n", "\r\n", "\n\n", " \n"])).utf8)
            if rng.chance(50) { mutate(&bytes, times: rng.range(1...2)) }
        case 15, 16:
            let depth = rng.pick([63, 64, 65, 511, 512, 513])
            bytes = Array((#"{"values":"# + String(repeating: "[", count: depth) + (rng.chance(50) ? String(repeating: "]", count: depth) + "}" : "")).utf8)
        case 17:
            bytes = window([FuzzCorpus.lines(rng.pick(corpus.xcodebuild.enumerations))], maxLines: 20)
        default:
            bytes = (0..<rng.range(0...64)).map { _ in Self.jsonBytes[rng.below(Self.jsonBytes.count)] }
        }
        traceInput(bytes)
        let text = String(decoding: bytes, as: UTF8.self)
        do {
            let suites = try TestEnumeration.parse(text)
            if let problem = Self.listingViolation(suites, uniqueTests: true) {
                fail(.xcodeListing, "test list: \(problem)", FuzzInput(target: .swiftTesting, stdout: bytes))
            }
            if expectThrow {
                fail(.xcodeListing, "a list with only errors was read as \(suites)", FuzzInput(target: .swiftTesting, stdout: bytes))
            } else if let expected {
                result.ran(.testList)
                if suites != expected {
                    fail(.xcodeListing, "test list gave other suites than it holds\n  got:      \(suites)\n  expected: \(expected)",
                         FuzzInput(target: .swiftTesting, stdout: bytes))
                }
            }
        } catch {
            result.listingsThrown += 1
            if expected != nil, !expectThrow {
                fail(.xcodeListing, "a well-formed test list was rejected: \(error)", FuzzInput(target: .swiftTesting, stdout: bytes))
            }
        }
    }

    /// What a list of identifiers names: `Target/Class/method` (nested suites joined by `/`), in first-seen order,
    /// each test once; identifiers with fewer or empty parts name nothing.
    static func expectedSuites(_ identifiers: [String]) -> [TestSuite] {
        var order: [SuiteID] = []
        var tests: [SuiteID: [String]] = [:]
        for identifier in identifiers {
            let parts = identifier.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard parts.count >= 3, !parts.contains(where: \.isEmpty) else { continue }
            let suite = SuiteID(module: parts[0], name: parts[1..<(parts.count - 1)].joined(separator: "/"))
            if tests[suite] == nil { order.append(suite) }
            if tests[suite]?.contains(parts[parts.count - 1]) != true { tests[suite, default: []].append(parts[parts.count - 1]) }
        }
        return order.map { TestSuite(id: $0, framework: .xcodebuild, tests: tests[$0] ?? []) }
    }

    static let productFolder = "/Users/me/Library/Developer/Xcode/DerivedData/App-abc/Build/Products"

    /// .xctestrun files: the real ones mutated (XML and binary), with absolute paths to relocate, nested deeply,
    /// random bytes. Reading never traps; relocating twice changes nothing the second time.
    mutating func fuzzXCTestRunFile() {
        var bytes: [UInt8]
        var original: XCTestRunFile?
        switch rng.below(20) {
        case 0..<7:
            bytes = rng.pick(corpus.xcodebuild.xctestruns)
            mutate(&bytes, times: rng.range(1...4), limit: 32_768)
        case 7..<10:
            bytes = rng.pick(corpus.xcodebuild.binaryXctestruns)
            for _ in 0..<rng.range(1...3) {
                if bytes.isEmpty { break }
                let i = rng.below(bytes.count)
                bytes[i] = rng.chance(50) ? rng.byte() : bytes[i] ^ (1 << UInt8(rng.below(8)))
            }
            if rng.chance(20) { mutate(&bytes, times: 1, limit: 32_768) }
        case 10..<13:
            // Written with absolute paths (by another tool): relocating gives back what xcodebuild wrote.
            let file = rng.pick(corpus.xcodebuild.xctestruns)
            original = try? XCTestRunFile.parse(Data(file))
            bytes = Array(String(decoding: file, as: UTF8.self).replacingOccurrences(of: "__TESTROOT__/", with: Self.productFolder + "/").utf8)
        case 13, 14:
            let depth = rng.pick([10, 100, 1000, 5000])
            switch rng.below(3) {
            case 0:
                bytes = Array(("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">" + String(repeating: "<array>", count: depth)
                    + (rng.chance(50) ? String(repeating: "</array>", count: depth) + "</plist>" : "")).utf8)
            case 1: bytes = Array(String(repeating: "(", count: depth).utf8)
            default: bytes = Array(String(repeating: "{a=", count: depth).utf8)
            }
        case 15, 16:
            bytes = Array(rng.pick(["bplist00", "<?xml version=\"1.0\"?><plist>", "{", "("]).utf8)
                + (0..<rng.range(0...64)).map { _ in rng.byte() }
        default:
            bytes = window([FuzzCorpus.lines(rng.pick(corpus.xcodebuild.xctestruns))], maxLines: 30)
        }
        traceInput(bytes)
        let data = Data(bytes)
        let input = FuzzInput(target: .swiftTesting, stdout: bytes)
        do {
            let file = try XCTestRunFile.parse(data)
            if file.targets.isEmpty { fail(.xcodeListing, ".xctestrun read without a target", input) }
            if Set(file.targets).count != file.targets.count { fail(.xcodeListing, ".xctestrun: a target twice: \(file.targets)", input) }
            if file.folders.contains(where: { $0.isEmpty || $0 == ".." || $0.contains("/") }) {
                fail(.xcodeListing, ".xctestrun: a folder that is no top-level entry: \(file.folders)", input)
            }
        } catch {
            result.listingsThrown += 1
        }
        do {
            guard let moved = try XCTestRunFile.relocated(data, productFolder: Self.productFolder) else {
                if original != nil { fail(.xcodeListing, "absolute paths were not relocated", input) }
                return
            }
            if (try? XCTestRunFile.relocated(moved, productFolder: Self.productFolder)) != nil {
                fail(.xcodeListing, "relocating twice changed the file again", input)
            }
            if let original {
                result.ran(.relocatedTestRun)
                let back = try? XCTestRunFile.parse(moved)
                if back != original {
                    fail(.xcodeListing, "relocated file reads otherwise\n  got:      \(String(describing: back))\n  expected: \(original)", input)
                }
            }
        } catch {
            if original != nil { fail(.xcodeListing, "a readable file could not be relocated: \(error)", input) }
        }
    }

    // MARK: Checks

    /// Per test, xcodebuild's events come as started → issues → ended (a clone's test without a start), and one
    /// more round of issues → ended only as the bundle's correction, with another verdict.
    static func xcodebuildOrderViolation(_ events: [TestEvent]) -> String? {
        // 0 nothing yet, 1 started or issues, 2 ended, 3 correction's issues, 4 corrected
        var phase: [TestID: Int] = [:]
        var verdict: [TestID: TestStatus] = [:]
        for event in events {
            switch event {
            case .started(let id):
                if phase[id, default: 0] != 0 { return "\(id) started after its \(phase[id] == 1 ? "issues" : "end")" }
                phase[id] = 1
            case .issue(let id, _):
                switch phase[id, default: 0] {
                case 0, 1: phase[id] = 1
                case 2, 3: phase[id] = 3
                default: return "an issue of \(id) after its correction"
                }
            case .ended(let id, let status, _, _):
                switch phase[id, default: 0] {
                case 0, 1: phase[id] = 2
                case 2, 3:
                    if verdict[id] == status { return "\(id) ended twice as \(status)" }
                    phase[id] = 4
                default: return "\(id) ended a third time"
                }
                verdict[id] = status
            case .measured, .suiteEnded:
                break
            }
        }
        return nil
    }

    /// The output without the result bundle: its marker lines and what is between them (to the end when it never
    /// closes), split as the parser splits lines.
    static func withoutBundle(_ bytes: [UInt8]) -> [UInt8] {
        let begin = Array(XcodebuildRunner.bundleBegin.utf8), end = Array(XcodebuildRunner.bundleEnd.utf8)
        var out: [UInt8] = []
        var inBundle = false
        for range in lineRanges(bytes) {
            var content = bytes[range]
            if content.last == 0x0A { content = content.dropLast() }
            if content.last == 0x0D { content = content.dropLast() }
            if content.elementsEqual(begin) {
                inBundle = true
            } else if content.elementsEqual(end) {
                inBundle = false
            } else if !inBundle {
                out += bytes[range]
            }
        }
        return out
    }

    /// The bundle only adds to what the console said: the events with it are those without it, then, for some of
    /// the unit's tests, a start (for a test the console never reported), issues (when the console had none that
    /// failed) and one end with a verdict other than the console's.
    mutating func checkReconciliation(_ kind: Kind, _ input: FuzzInput) {
        let console = Self.withoutBundle(input.stdout)
        guard console.count != input.stdout.count else { return }
        var plain = input
        plain.stdout = console
        let full = parse(input, interleave: false)
        let base = parse(plain, interleave: false)
        guard full.count >= base.count, Self.same(Array(full.prefix(base.count)), base) else {
            fail(kind, "the result bundle changed the console's events\n  with:    \(full)\n  without: \(base)", input)
            return
        }
        var started: Set<TestID> = []
        var ended: [TestID: TestStatus] = [:]
        var failing: Set<TestID> = []
        var reasonless: Set<TestID> = [] // skipped by the console without a reason
        for event in base {
            switch event {
            case .started(let id): started.insert(id)
            case .issue(let id, let issue) where issue.isFailure: failing.insert(id)
            case .ended(let id, let status, _, let reason):
                ended[id] = status
                if status == .skipped, reason == nil { reasonless.insert(id) } else { reasonless.remove(id) }
            default: break
            }
        }
        var phase: [TestID: Int] = [:] // 1 started or issues, 2 ended
        var problem: String?
        for event in full[base.count...] where problem == nil {
            switch event {
            case .started(let id):
                if phase[id] != nil || started.contains(id) || ended[id] != nil { problem = "the bundle started \(id) again" }
                phase[id] = 1
            case .issue(let id, _):
                if phase[id] == 2 { problem = "the bundle gave an issue of \(id) after its end" }
                if failing.contains(id) { problem = "the bundle repeated the console's issues of \(id)" }
                phase[id] = 1
            case .ended(let id, let status, _, let reason):
                if phase[id] == 2 { problem = "the bundle ended \(id) twice" }
                // Only a skip the console gave no reason for may be ended again, to add the bundle's reason.
                let addsReason = status == .skipped && reason != nil && reasonless.contains(id)
                if ended[id] == status, !addsReason { problem = "the bundle ended \(id) as the console did (\(status))" }
                phase[id] = 2
            case .measured, .suiteEnded:
                problem = "the bundle gave \(event)"
            }
        }
        if problem == nil, let open = phase.first(where: { $0.value != 2 }) { problem = "the bundle started \(open.key) without ending it" }
        if let problem { fail(kind, problem + "\n  with:    \(full)\n  without: \(base)", input) }
    }
}
