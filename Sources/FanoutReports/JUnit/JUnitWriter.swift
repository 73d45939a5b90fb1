import FanoutCore
import struct Foundation.Data
import struct Foundation.Date

/// Writes a `RunReport` as `junit.xml`, the JUnit/Ant format with Surefire's rerun and flaky elements, as read by
/// Jenkins, GitLab, GitHub test-report actions, Buildkite and CircleCI.
///
/// Shape:
/// - one `<testsuite>` per (destination, module), named `destination/module`, with `destination`, `module`,
///   `fanout.run-id`, `agents` (the agents that ran its tests) and, for a sharded run, `shard` (`2/4`) properties;
/// - one `<testcase classname="Module.Class" name="test">` per test and destination; with several destinations the
///   name gets a ` [destination]` suffix, because Jenkins and the GitHub reporters key tests by classname and name
///   only and would otherwise merge or drop the second destination's result;
/// - failed → `<failure>`, crashed/timed-out/not-run → `<error type="crash|timeout|not-run">`,
///   skipped → `<skipped>`; a failure muted by quarantine → `<skipped>` too, with the failure in its `<system-out>`
///   (so that a JUnit-reading CI gate does not count it), counted in `skipped`;
///   the element describes the attempt that decided the outcome, and earlier failed attempts follow as Surefire's
///   `<rerunFailure>`/`<rerunError>`; a flaky test is a passing test case with one `<flakyFailure>` (or
///   `<flakyError>` for a crash or time-out) per failed attempt;
/// - logs: each unit's log once in the `<system-out>` of every test suite it ran tests of (Jenkins shows a suite's
///   output on each of its test cases), and, because GitLab and the GitHub reporters only show output attached to the
///   test case itself, a failing test case also carries its unit's log in its own `<system-out>`: whole when it is
///   small, else its tail;
/// - performance: every measure result with a verdict appears on its test case as `<properties>`
///   (`performance.<metric>.verdict`, `.average`, `.baseline`, `.change`, pytest's place for them); a regression or
///   too-noisy result also as a line in the test case's `<system-out>`, which every CI view shows; and a regression
///   that failed the run (`--fail-on-perf-regression`) as a `<failure type="performance-regression">` on an otherwise
///   passing test case, counted in `failures`. Without the flag a regression never turns a test case red.
public struct JUnitWriter: Sendable {
    public static let fileName = "junit.xml"

    /// A failing test case's own `<system-out>` holds its unit's whole log up to this many characters...
    public var inlineLogLimit: Int
    /// ...and above it, this many last lines (where a crash or hang shows).
    public var inlineLogTailLines: Int
    /// Whether suites carry the logs of units in which every attempt passed or was skipped. On by default; turn it
    /// off for very large runs where only failures' logs are wanted in CI (report.json keeps every log anyway).
    public var includePassingUnitLogs: Bool

    public init(inlineLogLimit: Int = 8_000, inlineLogTailLines: Int = 60, includePassingUnitLogs: Bool = true) {
        self.inlineLogLimit = inlineLogLimit
        self.inlineLogTailLines = inlineLogTailLines
        self.includePassingUnitLogs = includePassingUnitLogs
    }

    /// The UTF-8 bytes of `junit.xml`.
    public func encode(_ report: RunReport) -> Data {
        Data(render(report).utf8)
    }

    /// The document as a string.
    public func render(_ report: RunReport) -> String {
        let context = Context(report)
        var xml = XMLBuilder()
        let tally = Tally(report.results, perfFailed: context.perfFailed)
        xml.open("testsuites", [("name", "fanout \(report.runID)")] + tally.attributes)
        for suite in JUnitSuite.group(report) {
            write(suite, context: context, into: &xml)
        }
        return xml.finish()
    }

    // MARK: - Suites

    private func write(_ suite: JUnitSuite, context: Context, into xml: inout XMLBuilder) {
        let units = suite.unitIDs(in: context.report).compactMap { context.units[$0] }
        let start = units.map(\.startedAt).min() ?? 0
        let timestamp = context.report.startedAt.addingTimeInterval(start.isFinite ? start : 0)
        xml.open("testsuite", [("name", suite.name)] + Tally(suite.results, perfFailed: context.perfFailed).attributes + [
            ("timestamp", ISO8601Timestamp.string(from: timestamp, milliseconds: false, zone: false)),
        ])
        xml.open("properties")
        var properties = [("destination", suite.destination), ("module", suite.module),
                          ("fanout.run-id", context.report.runID)]
        let agents = Set(units.map(\.agent)).sorted()
        if !agents.isEmpty { properties.append(("agents", agents.joined(separator: ", "))) }
        // A sharded run's suites say which of the N CI jobs ran them (`--shard I/N`).
        if let shard = context.report.shard { properties.append(("shard", shard.description)) }
        for (name, value) in properties {
            xml.element("property", [("name", name), ("value", value)])
        }
        xml.close()
        for result in suite.results {
            write(result, context: context, into: &xml)
        }
        let logged = units.filter { includePassingUnitLogs || context.troubledUnits.contains($0.id) }
        if !logged.isEmpty {
            xml.element("system-out", text: logged.map { Self.unitHeader($0) + Self.cleanLog($0.log) }
                .joined(separator: "\n\n"))
        }
        xml.close()
    }

    // MARK: - Test cases

    private func write(_ result: TestResult, context: Context, into xml: inout XMLBuilder) {
        let name = context.multipleDestinations ? "\(result.id.name) [\(result.destination)]" : result.id.name
        var attributes: XMLBuilder.Attributes = [
            ("classname", result.id.suite.description), ("name", name), ("time", Self.seconds(result.duration)),
        ]
        let deciding = result.decidingAttempt
        let unit = deciding.flatMap { context.units[$0.unit] }
        let measurements = context.measurements[PerformanceFacts.key(destination: result.destination,
                                                                     test: result.id)] ?? []
        let perfFailure = measurements.first { $0.verdict?.failsRun == true }
        let perfLines = measurements.compactMap { record -> String? in
            guard let verdict = record.verdict, verdict.kind == .regression || verdict.kind == .tooNoisy else {
                return nil
            }
            return "performance: \(PerformanceFacts.measured(record.measurement)) · "
                + "\(PerformanceFacts.label(verdict.kind)): \(verdict.message)"
        }.joined(separator: "\n")
        // `file`/`line` (as pytest writes them) let GitHub reporters annotate the failing line.
        if result.needsAttention, let location = deciding?.failingIssues.lazy.compactMap(\.location).first {
            attributes += [("file", location.file), ("line", String(location.line))]
        } else if let location = perfFailure?.measurement.location, !result.needsAttention {
            attributes += [("file", location.file), ("line", String(location.line))]
        }

        if result.isMutedFailure {
            return writeMuted(result, attributes: attributes, unit: unit, context: context, into: &xml)
        }
        switch result.outcome {
        case .passed, .flaky:
            let flakes = result.earlierFailedAttempts
            guard !flakes.isEmpty || !measurements.isEmpty else { return xml.element("testcase", attributes) }
            xml.open("testcase", attributes)
            writeProperties(of: measurements, into: &xml)
            if let perfFailure, let verdict = perfFailure.verdict {
                xml.element("failure", [("message", "\(perfFailure.measurement.metric): \(verdict.message)"),
                                        ("type", "performance-regression")],
                            text: perfLines + "\n\nThe run failed on it because of --fail-on-perf-regression.")
            }
            for (number, attempt) in flakes {
                writeAttempt(attempt, number: number, as: attempt.outcome == .failed ? "flakyFailure" : "flakyError",
                             of: result, context: context, into: &xml)
            }
            if !perfLines.isEmpty { xml.element("system-out", text: perfLines) }
            xml.close()

        case .skipped:
            xml.open("testcase", attributes)
            writeProperties(of: measurements, into: &xml)
            if let reason = result.skipReason, !reason.isEmpty {
                xml.element("skipped", [("message", reason)])
            } else {
                xml.element("skipped")
            }
            xml.close()

        case .failed, .crashed, .timedOut, .notRun:
            xml.open("testcase", attributes)
            writeProperties(of: measurements, into: &xml)
            if let order = result.orderDependence, measurements.isEmpty {
                // Readers that keep properties (Jenkins, GitLab) can tell an order-dependent failure from a flake.
                xml.open("properties")
                xml.element("property", [("name", "order.dependent"), ("value", "true")])
                xml.element("property", [("name", order.polluters == nil ? "order.suspects" : "order.polluters"),
                                         ("value", order.blamed.map(\.description).joined(separator: " "))])
                xml.close()
            }
            var message = ReportFacts.headline(of: deciding, outcome: result.outcome, unit: unit)
            if let order = ReportFacts.orderLine(result, runID: context.report.runID) { message = order + " · " + message }
            let (element, type) = switch result.outcome {
            case .failed: ("failure", ReportFacts.failureType(of: deciding))
            case .crashed: ("error", "crash")
            case .timedOut: ("error", "timeout")
            default: ("error", "not-run")
            }
            var body = deciding.map {
                Self.body(of: $0, number: result.attempts.count, in: result, units: context.units)
            } ?? message
            if let diagnostics = deciding?.diagnostics, !diagnostics.isEmpty {
                body += "\n\n" + Self.cleanLog(diagnostics)
            }
            xml.element(element, [("message", message), ("type", type)], text: body)
            for (number, attempt) in result.earlierFailedAttempts {
                writeAttempt(attempt, number: number, as: attempt.outcome == .failed ? "rerunFailure" : "rerunError",
                             of: result, context: context, into: &xml)
            }
            // Jenkins' JUnit attachments convention: `[[ATTACHMENT|path]]`, relative to the report folder.
            let attached = (deciding?.attachments ?? []).map { "[[ATTACHMENT|\($0)]]" }.joined(separator: "\n")
            let head = [perfLines, attached].filter { !$0.isEmpty }.joined(separator: "\n\n")
            if let unit {
                xml.element("system-out", text: (head.isEmpty ? "" : head + "\n\n") + inlineLog(of: unit, suite: result))
            } else if !head.isEmpty {
                xml.element("system-out", text: head)
            }
            xml.close()
        }
    }

    /// A failure muted by quarantine: a `<skipped>` test case, so that no JUnit reader counts it as a failure
    /// (GitLab, Jenkins and the GitHub reporters decide a case's status by its `<failure>`/`<error>`/`<skipped>`
    /// child alone), whose message says it failed and why it is muted; the failure itself, every issue and the
    /// unit's log are in its `<system-out>`, and `quarantine.*` properties name the entry.
    private func writeMuted(_ result: TestResult, attributes: XMLBuilder.Attributes, unit: UnitReport?,
                            context: Context, into xml: inout XMLBuilder) {
        let deciding = result.decidingAttempt
        xml.open("testcase", attributes)
        if let entry = result.quarantine {
            xml.open("properties")
            for (name, value) in [("quarantine.mode", entry.mode.rawValue), ("quarantine.reason", entry.reason),
                                  ("quarantine.owner", entry.ownership), ("quarantine.expires", entry.expires)]
                where !value.isEmpty {
                xml.element("property", [("name", name), ("value", value)])
            }
            xml.close()
        }
        let headline = ReportFacts.headline(of: deciding, outcome: result.outcome, unit: unit)
        let reason = result.quarantine.map { ReportFacts.quarantineLine($0) } ?? ""
        xml.element("skipped", [("message", "muted by quarantine, \(result.outcome.rawValue): \(headline) (\(reason))")])
        var body = deciding.map { Self.body(of: $0, number: result.attempts.count, in: result, units: context.units) }
            ?? headline
        if let diagnostics = deciding?.diagnostics, !diagnostics.isEmpty { body += "\n\n" + Self.cleanLog(diagnostics) }
        let log = unit.map { "\n\n" + inlineLog(of: $0, suite: result) } ?? ""
        xml.element("system-out", text: "MUTED by quarantine (\(reason)): this failure does not fail the run.\n\n" + body + log)
        xml.close()
    }

    /// `<properties>` of a test case's measure results: `performance.<metric>.average` (in the metric's unit) and,
    /// when judged, `.verdict` (`recorded`, `passed`, `regression`, `too-noisy`), `.baseline` and `.change` (a
    /// fraction, 0.12 = 12% slower).
    private func writeProperties(of measurements: [MeasurementRecord], into xml: inout XMLBuilder) {
        guard !measurements.isEmpty else { return }
        xml.open("properties")
        for record in measurements {
            let m = record.measurement
            let prefix = "performance.\(m.metric)"
            var properties = [("\(prefix).average", Self.number(m.meanOfValues))]
            if let verdict = record.verdict {
                properties.append(("\(prefix).verdict", verdict.kind.rawValue))
                if let base = verdict.baselineAverage { properties.append(("\(prefix).baseline", Self.number(base))) }
                if let change = verdict.change { properties.append(("\(prefix).change", Self.number(change))) }
            }
            for (name, value) in properties { xml.element("property", [("name", name), ("value", value)]) }
        }
        xml.close()
    }

    /// Six decimals (microseconds for seconds), as XCTest prints values.
    private static func number(_ value: Double) -> String {
        value.isFinite ? String(Self.fixed6(value)) : "\(value)"
    }

    private static func fixed6(_ value: Double) -> String {
        let scaled = (abs(value) * 1_000_000).rounded()
        guard scaled < 9e15 else { return "\(value)" }
        let whole = Int(scaled) / 1_000_000, frac = Int(scaled) % 1_000_000
        var f = String(frac)
        while f.count < 6 { f = "0" + f }
        return (value < 0 && scaled > 0 ? "-" : "") + "\(whole).\(f)"
    }

    /// A failed attempt other than the deciding one, shaped like Surefire's rerun and flaky elements:
    /// `<stackTrace>` holds the issues, `<system-err>` the diagnostics of that attempt.
    private func writeAttempt(_ attempt: Attempt, number: Int, as element: String, of result: TestResult,
                              context: Context, into xml: inout XMLBuilder) {
        let unit = context.units[attempt.unit]
        let type = switch attempt.outcome {
        case .crashed: "crash"
        case .timedOut: "timeout"
        default: ReportFacts.failureType(of: attempt)
        }
        xml.open(element, [("message", ReportFacts.headline(of: attempt, outcome: attempt.outcome, unit: unit)),
                           ("type", type)])
        xml.element("stackTrace", text: Self.body(of: attempt, number: number, in: result, units: context.units))
        if let diagnostics = attempt.diagnostics, !diagnostics.isEmpty {
            xml.element("system-err", text: Self.cleanLog(diagnostics))
        }
        xml.close()
    }

    /// Every issue of the attempt as `file:line: message`, then where the attempt ran.
    private static func body(of attempt: Attempt, number: Int, in result: TestResult,
                             units: [Int: UnitReport]) -> String {
        var lines = attempt.issues.map(ReportFacts.line(for:))
        if lines.isEmpty {
            lines.append(ReportFacts.headline(of: attempt, outcome: attempt.outcome, unit: units[attempt.unit]))
        }
        var place = "attempt \(number) of \(result.attempts.count) on agent \(attempt.agent), unit \(attempt.unit)"
        if let unit = units[attempt.unit] { place += " (slot \(unit.slot), ended: \(unit.ending))" }
        return lines.joined(separator: "\n") + "\n\n" + place
    }

    private func inlineLog(of unit: UnitReport, suite result: TestResult) -> String {
        let log = Self.cleanLog(unit.log)
        guard log.count > inlineLogLimit else { return Self.unitHeader(unit) + log }
        let (lines, omitted) = ReportFacts.tail(log, lines: inlineLogTailLines)
        var tail = lines.joined(separator: "\n")
        if tail.count > inlineLogLimit { tail = String(tail.suffix(inlineLogLimit)) }
        return Self.unitHeader(unit)
            + "[\(omitted) earlier lines: see the system-out of test suite "
            + "\(result.destination)/\(result.id.suite.module), or units[].log in report.json]\n" + tail
    }

    // MARK: - Text

    private static func unitHeader(_ unit: UnitReport) -> String {
        "=== unit \(unit.id) · agent \(unit.agent) slot \(unit.slot) · started +\(String(format2: unit.startedAt)) s"
            + " · \(String(format2: unit.duration)) s · \(unit.ending)\n$ \(unit.command)\n"
    }

    /// Logs and backtraces with line endings folded (escaping does the rest) and a placeholder for nothing.
    private static func cleanLog(_ log: String) -> String {
        let text = TextSanitizer.normalizingNewlines(log)
        return text.isEmpty ? "(no output)" : text
    }

    /// Seconds with millisecond precision, never negative or non-finite (JUnit readers parse it as a decimal).
    static func seconds(_ value: Double) -> String {
        String(format3: value.isFinite ? max(0, value) : 0)
    }

    // MARK: - Support

    /// What every test case needs to look up, computed once per document.
    private struct Context {
        let report: RunReport
        let units: [Int: UnitReport]
        let multipleDestinations: Bool
        /// Units in which some attempt failed, crashed, timed out or did not run.
        let troubledUnits: Set<Int>
        /// Measure results by destination and test (`PerformanceFacts.key`).
        let measurements: [String: [MeasurementRecord]]
        /// Results (`PerformanceFacts.key`) that passed but whose regression failed the run: JUnit failures.
        let perfFailed: Set<String>

        init(_ report: RunReport) {
            self.report = report
            units = Dictionary(report.units.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            multipleDestinations = Set(report.destinations + report.results.map(\.destination)).count > 1
            troubledUnits = Set(report.results.flatMap(\.attempts)
                .filter { $0.outcome.isFailure || $0.outcome == .notRun }.map(\.unit))
            measurements = PerformanceFacts.byTest(report)
            perfFailed = Set(report.measurements.filter { $0.verdict?.failsRun == true }
                .map { PerformanceFacts.key(destination: $0.destination, test: $0.measurement.test) })
        }
    }

    /// The counting attributes shared by `<testsuites>` and `<testsuite>`. JUnit has no place for flaky or not-run:
    /// flaky counts as a passed test, not-run as an error (it is a hole in the run a CI page must show). A passing
    /// test whose performance regression failed the run counts as a failure, as its test case shows one.
    private struct Tally {
        var tests = 0, failures = 0, errors = 0, skipped = 0
        var time = 0.0

        init(_ results: [TestResult], perfFailed: Set<String>) {
            for result in results {
                tests += 1
                time += result.duration.isFinite ? max(0, result.duration) : 0
                if result.isMutedFailure {
                    skipped += 1
                    continue
                }
                switch result.outcome {
                case .failed: failures += 1
                case .crashed, .timedOut, .notRun: errors += 1
                case .skipped: skipped += 1
                case .passed, .flaky:
                    if perfFailed.contains(PerformanceFacts.key(destination: result.destination, test: result.id)) {
                        failures += 1
                    }
                }
            }
        }

        var attributes: XMLBuilder.Attributes {
            [("tests", String(tests)), ("failures", String(failures)), ("errors", String(errors)),
             ("skipped", String(skipped)), ("time", JUnitWriter.seconds(time))]
        }
    }
}
