import FanoutCore
import FanoutTestSupport
import Foundation
import Testing
@testable import FanoutReports

@Suite(.timeLimit(.minutes(2))) struct JSONReportWriterTests {
    let writer = JSONReportWriter()

    @Test func roundTripGivesBackTheSameReport() throws {
        let report = Sample.report()
        let decoded = try JSONReportReader().decode(writer.encode(report))
        #expect(decoded == report)
        // Spot checks, so a failure says which part broke.
        #expect(decoded.results.map(\.outcome) == report.results.map(\.outcome))
        #expect(decoded.results.first { $0.outcome == .flaky }?.attempts.count == 2)
        #expect(decoded.startedAt == report.startedAt)
    }

    @Test func aUnitIsOneFlatObjectOfItsSummaryAndItsProcess() throws {
        var unit = UnitReport(id: 3, destination: "local", framework: .xctest, agent: "agent-1", slot: 1,
                              suites: ["AppTests.LoginTests"], testCount: 4, estimate: 2, startedAt: 1.5,
                              duration: 3.25, ending: "exit 1", command: "run 'it'", log: "out", takenFrom: 2,
                              handedOver: 1)
        unit.cpuSeconds = 4.5
        unit.peakMemoryBytes = 1 << 31
        unit.cpuWaitSeconds = 0.5
        unit.concurrent = true
        unit.replayOf = "AppTests.LoginTests/testA"
        #expect(unit.summary.cpuSeconds == 4.5 && unit.agent == "agent-1", "the summary's fields read as the unit's")
        var report = ReportBuilder().build()
        report.units = [unit]
        let data = try writer.encode(report)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let written = try #require((object["units"] as? [[String: Any]])?.first)
        #expect(Set(written.keys) == [
            "agent", "command", "concurrent", "cpuSeconds", "cpuWaitSeconds", "destination", "duration", "ending",
            "estimate", "framework", "handedOver", "id", "log", "peakMemoryBytes", "replayOf", "slot", "startedAt",
            "suites", "takenFrom", "testCount",
        ])
        #expect(written["cpuSeconds"] as? Double == 4.5 && written["takenFrom"] as? Int == 2)
        #expect(try JSONReportReader().decode(data).units == [unit])
        // A unit as reports before CPU, stealing and order checks wrote it still reads.
        let old = Data(#"""
            {"agent":"agent-1","command":"run","destination":"local","duration":2,"ending":"exit 0","estimate":1,
             "framework":"xctest","id":1,"log":"","slot":0,"startedAt":0,"suites":["AppTests.LoginTests"],"testCount":1}
            """#.utf8)
        let read = try JSONDecoder().decode(UnitReport.self, from: old)
        #expect(read.ending == "exit 0" && read.cpuSeconds == nil && read.takenFrom == nil && read.concurrent == nil)
    }

    @Test func emptyReportRoundTrips() throws {
        let report = ReportBuilder().build()
        #expect(try JSONReportReader().decode(writer.encode(report)) == report)
    }

    @Test func outputIsStableSortedAndPretty() throws {
        let report = Sample.report()
        let first = try writer.encode(report)
        let second = try writer.encode(report)
        #expect(first == second)
        let text = try #require(String(data: first, encoding: .utf8))
        #expect(text.hasPrefix("{\n  \"agents\" : ["))
        #expect(text.hasSuffix("}\n"))
        #expect(text.contains("\"schemaVersion\" : 1"))
        // Top-level keys, in the order they appear, are sorted.
        let topLevel = text.split(separator: "\n").filter { $0.hasPrefix("  \"") }
            .map { $0.dropFirst(3).prefix { $0 != "\"" } }
        #expect(topLevel.count == 17)
        #expect(topLevel == topLevel.sorted())
        #expect(text.contains("\"bundle\" : \"/src/Demo/.build/debug/DemoPackageTests.xctest\""), "slashes unescaped")
    }

    @Test func aLargeReportIsOneLineAndItsPiecesJoinToExactlyWhatOneEncoderWrites() throws {
        var report = Sample.report()
        let template = try #require(report.results.first)
        report.results = (0..<(JSONReportWriter.indentedResultLimit + 7)).map { n in
            var r = template
            r.id = TestID(module: "M\(n % 7)", suite: "S\(n % 13)", name: "test\(n) \"results\":[] <&>")
            return r
        }
        report.warnings = ["a warning that says \"results\":[] too"]
        let written = try writer.encode(report)
        let work = writer.encoding(report)
        #expect(work.pieces.count > 2, "the results are encoded in slices")
        let whole = try JSONReportWriter.encoder(indented: false).encode(report) + [0x0A]
        #expect(written == whole, "byte for byte what one encoder writes")
        #expect(!written.dropLast().contains(0x0A), "one line")
        #expect(try JSONReportReader().decode(written) == report)
        // At the limit and below, still indented.
        report.results.removeLast(7)
        #expect(String(decoding: try writer.encode(report), as: UTF8.self).hasPrefix("{\n  \"agents\" : ["))
    }

    @Test func datesAreISO8601UTCWithMilliseconds() throws {
        let text = try #require(String(data: writer.encode(Sample.report()), encoding: .utf8))
        #expect(text.contains("\"startedAt\" : \"2024-05-01T12:00:00.250Z\""))
        #expect(text.contains("\"finishedAt\" : \"2024-05-01T12:01:15.750Z\""))
    }

    @Test func outcomesAndIssueKindsUseTheirDocumentedSpellings() throws {
        let text = try #require(String(data: writer.encode(Sample.report()), encoding: .utf8))
        for spelling in ["\"timed-out\"", "\"not-run\"", "\"flaky\"", "\"crashed\"", "\"skipped\"", "\"xctest\""] {
            #expect(text.contains(spelling), "missing \(spelling)")
        }
    }

    @Test func nonFiniteNumbersDoNotMakeTheReportUnwritable() throws {
        var b = ReportBuilder()
        b.passed("M.C/testPerf")
        b.measurement("M.C/testPerf", average: 0, rsd: .nan, values: [])
        b.classReport("M.C", estimate: .infinity, actual: 1)
        let report = b.build()
        let decoded = try JSONReportReader().decode(writer.encode(report))
        #expect(decoded.measurements[0].measurement.relativeStandardDeviation.isNaN)
        #expect(decoded.classes[0].estimate == .infinity)
    }

    @Test func refusesANewerSchemaVersionSayingWhatToDo() throws {
        var report = Sample.report()
        report.schemaVersion = RunReport.currentSchemaVersion + 1
        let error = #expect(throws: ReportDecodingError.self) { try JSONReportReader().decode(writer.encode(report)) }
        #expect(error?.reason == .unsupportedSchemaVersion(RunReport.currentSchemaVersion + 1))
        #expect(error?.description.contains("Upgrade fanout") == true)
    }

    @Test func saysWhenTheFileIsNotAReport() {
        let notJSON = #expect(throws: ReportDecodingError.self) {
            try JSONReportReader().decode(Data("<testsuites/>".utf8), source: "junit.xml")
        }
        guard case .notJSON = notJSON?.reason else {
            Issue.record("expected notJSON, got \(String(describing: notJSON))")
            return
        }
        #expect(notJSON?.description.hasPrefix("junit.xml is not valid JSON") == true)

        let other = #expect(throws: ReportDecodingError.self) { try JSONReportReader().decode(Data(#"{"name": 1}"#.utf8)) }
        #expect(other?.reason == .notAFanoutReport)
    }

    @Test func namesTheFieldThatIsWrong() throws {
        let text = try #require(String(data: writer.encode(Sample.report()), encoding: .utf8))
        let broken = text.replacingOccurrences(of: "\"outcome\" : \"crashed\"", with: "\"outcome\" : \"exploded\"")
        #expect(broken != text)
        let error = #expect(throws: ReportDecodingError.self) { try JSONReportReader().decode(Data(broken.utf8)) }
        guard case .invalid(let detail)? = error?.reason else {
            Issue.record("expected invalid, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("outcome"))
        #expect(detail.contains("["), "the path into the arrays is given: \(detail)")
    }

    @Test func readsFromDiskAndNamesAMissingFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fanout-json-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("report.json")
        let report = Sample.report()
        try writer.encode(report).write(to: url)
        #expect(try JSONReportReader().read(from: url) == report)

        let missing = directory.appendingPathComponent("nope.json")
        let error = #expect(throws: ReportDecodingError.self) { try JSONReportReader().read(from: missing) }
        guard case .unreadable? = error?.reason else {
            Issue.record("expected unreadable, got \(String(describing: error))")
            return
        }
        #expect(error?.description.contains(missing.path) == true)
    }
}

@Suite(.timeLimit(.minutes(2))) struct ISO8601TimestampTests {
    @Test(arguments: [0.0, 1_714_564_800.25, 1_700_000_000.123, 1_712_345_678.999, -86_400.5, 951_782_400.001])
    func millisecondDatesRoundTripExactly(seconds: Double) throws {
        let date = Date(timeIntervalSince1970: seconds)
        let text = ISO8601Timestamp.string(from: date)
        #expect(ISO8601Timestamp.date(from: text) == date, "\(text)")
    }

    @Test func formatsKnownDates() {
        #expect(ISO8601Timestamp.string(from: Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(ISO8601Timestamp.string(from: Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00.000Z")
        #expect(ISO8601Timestamp.string(from: Date(timeIntervalSince1970: 1_714_564_800.2506))
            == "2024-05-01T12:00:00.251Z")
        #expect(ISO8601Timestamp.string(from: Date(timeIntervalSince1970: 1_714_564_800.9996), milliseconds: false,
                                        zone: false) == "2024-05-01T12:00:01")
    }

    @Test func anyDateSurvivesToTheMillisecond() throws {
        let now = Date()
        let back = try #require(ISO8601Timestamp.date(from: ISO8601Timestamp.string(from: now)))
        #expect(abs(back.timeIntervalSince(now)) <= 0.0005)
    }

    @Test func readsOtherISO8601Spellings() {
        let expected = Date(timeIntervalSince1970: 1_714_564_800)
        #expect(ISO8601Timestamp.date(from: "2024-05-01T12:00:00Z") == expected)
        #expect(ISO8601Timestamp.date(from: "2024-05-01T12:00:00") == expected)
        #expect(ISO8601Timestamp.date(from: "2024-05-01T14:00:00+02:00") == expected)
        #expect(ISO8601Timestamp.date(from: "2024-05-01T07:30:00-0430") == expected)
        #expect(ISO8601Timestamp.date(from: "2024-05-01T12:00:00.000000Z") == expected)
        #expect(ISO8601Timestamp.date(from: "2024-05-01T12:00:00.1234Z")
            == Date(timeIntervalSince1970: 1_714_564_800.123))
    }

    @Test(arguments: ["", "2024-05-01", "2024-13-01T00:00:00Z", "2024-05-01T25:00:00Z", "2024-05-01T12:00:00.Z",
                      "2024-05-01T12:00:00Zjunk", "yesterday"])
    func rejectsWhatIsNotATimestamp(text: String) {
        #expect(ISO8601Timestamp.date(from: text) == nil)
    }
}
