import FanoutCore
import struct Foundation.Data
import struct Foundation.Date

/// Writes a `RunReport` as `junit.xml`, the JUnit/Ant format with Surefire's rerun and flaky elements, as read by
/// Jenkins, GitLab, GitHub test-report actions, Buildkite and CircleCI.
///
/// Shape:
/// - one `<testsuite>` per (destination, module), named `destination/module`, with a `destination` property;
/// - one `<testcase classname="Module.Class" name="test">` per test and destination; with several destinations the
///   name gets a ` [destination]` suffix, because Jenkins and the GitHub reporters key tests by classname and name
///   only and would otherwise merge or drop the second destination's result;
/// - failed → `<failure>`, crashed/timed-out/not-run → `<error type="crash|timeout|not-run">`,
///   skipped → `<skipped>`;
///   the element describes the attempt that decided the outcome, and earlier failed attempts follow as Surefire's
///   `<rerunFailure>`/`<rerunError>`; a flaky test is a passing test case with one `<flakyFailure>` (or
///   `<flakyError>` for a crash or time-out) per failed attempt;
/// - logs: each unit's log once in the `<system-out>` of every test suite it ran tests of (Jenkins shows a suite's
///   output on each of its test cases), and, because GitLab and the GitHub reporters only show output attached to the
///   test case itself, a failing test case also carries its unit's log in its own `<system-out>`: whole when it is
///   small, else its tail.
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
        let tally = Tally(report.results)
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
        xml.open("testsuite", [("name", suite.name)] + Tally(suite.results).attributes + [
            ("timestamp", ISO8601Timestamp.string(from: timestamp, milliseconds: false, zone: false)),
        ])
        xml.open("properties")
        var properties = [("destination", suite.destination), ("module", suite.module),
                          ("fanout.run-id", context.report.runID)]
        let agents = Set(units.map(\.agent)).sorted()
        if !agents.isEmpty { properties.append(("agents", agents.joined(separator: ", "))) }
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
        // `file`/`line` (as pytest writes them) let GitHub reporters annotate the failing line.
        if result.needsAttention, let location = deciding?.failingIssues.lazy.compactMap(\.location).first {
            attributes += [("file", location.file), ("line", String(location.line))]
        }

        switch result.outcome {
        case .passed, .flaky:
            let flakes = result.earlierFailedAttempts
            guard !flakes.isEmpty else { return xml.element("testcase", attributes) }
            xml.open("testcase", attributes)
            for (number, attempt) in flakes {
                writeAttempt(attempt, number: number, as: attempt.outcome == .failed ? "flakyFailure" : "flakyError",
                             of: result, context: context, into: &xml)
            }
            xml.close()

        case .skipped:
            xml.open("testcase", attributes)
            if let reason = result.skipReason, !reason.isEmpty {
                xml.element("skipped", [("message", reason)])
            } else {
                xml.element("skipped")
            }
            xml.close()

        case .failed, .crashed, .timedOut, .notRun:
            xml.open("testcase", attributes)
            let message = ReportFacts.headline(of: deciding, outcome: result.outcome, unit: unit)
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
            if let unit {
                xml.element("system-out", text: inlineLog(of: unit, suite: result))
            }
            xml.close()
        }
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

        init(_ report: RunReport) {
            self.report = report
            units = Dictionary(report.units.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            multipleDestinations = Set(report.destinations + report.results.map(\.destination)).count > 1
            troubledUnits = Set(report.results.flatMap(\.attempts)
                .filter { $0.outcome.isFailure || $0.outcome == .notRun }.map(\.unit))
        }
    }

    /// The counting attributes shared by `<testsuites>` and `<testsuite>`. JUnit has no place for flaky or not-run:
    /// flaky counts as a passed test, not-run as an error (it is a hole in the run a CI page must show).
    private struct Tally {
        var tests = 0, failures = 0, errors = 0, skipped = 0
        var time = 0.0

        init(_ results: [TestResult]) {
            for result in results {
                tests += 1
                time += result.duration.isFinite ? max(0, result.duration) : 0
                switch result.outcome {
                case .failed: failures += 1
                case .crashed, .timedOut, .notRun: errors += 1
                case .skipped: skipped += 1
                case .passed, .flaky: break
                }
            }
        }

        var attributes: XMLBuilder.Attributes {
            [("tests", String(tests)), ("failures", String(failures)), ("errors", String(errors)),
             ("skipped", String(skipped)), ("time", JUnitWriter.seconds(time))]
        }
    }
}
