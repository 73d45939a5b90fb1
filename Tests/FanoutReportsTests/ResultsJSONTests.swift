import FanoutCore
import FanoutTestSupport
import Foundation
import Testing
@testable import FanoutReports

/// `ResultsJSON` writes report.json's results without JSONEncoder: it must write exactly JSONEncoder's bytes, for
/// every field, every kind of string and number, and know every field there is.
@Suite struct ResultsJSONTests {
    let encoder = JSONReportWriter.encoder(indented: false)

    func attempt(_ n: Int) -> Attempt {
        var a = Attempt(outcome: Outcome.allCases[n % Outcome.allCases.count], duration: [0, 1, 0.001, 1e-05, 123456789.123, 1e21, 0.1 + 0.2, 2.5e-10, 100][n % 9],
                        issues: [], unit: n, agent: "agent-\(n)")
        if n % 2 == 0 {
            a.issues = [Issue(kind: .assertion, message: "XCTAssertEqual failed: (\"a/b\") is not equal to (\"c\\d\")\n\ttab",
                              location: SourceLocation(file: "/src/Tests/ATests.swift", line: 42)),
                        Issue(kind: .expectationTimeout, message: "ctl \u{01}\u{08}\u{0C}\r\u{1F}\u{7F} é 😀 \u{2028}", isFailure: false)]
        }
        if n % 3 == 0 {
            a.skipReason = "skip \"quoted\""
            a.diagnostics = "backtrace\n#0 0x0001 in main"
            a.attachments = ["attachments/a b/screen.png", "x\\y"]
            a.cpuSeconds = [0.5, 2, 1e-7][n % 3 == 0 ? (n / 3) % 3 : 0]
            a.repetition = n
            a.seed = -n
            a.contended = "measured beside other work"
            a.position = n + 1
            a.replayOf = n - 1
        }
        return a
    }

    func results() -> [TestResult] {
        (0..<60).map { n in
            var r = TestResult(id: TestID(module: "M\(n % 3)", suite: "Suite/Nested \(n % 5)", name: "test\(n)(\"x\") /path"),
                               framework: Framework.allCases[n % Framework.allCases.count], destination: "dest \(n % 4)",
                               outcome: Outcome.allCases[(n + 1) % Outcome.allCases.count],
                               attempts: (0..<(n % 4)).map { attempt(n + $0) })
            if n % 7 == 0 { r.flakeScore = FlakeScore(attempts: 10, failures: 2, runs: 5, flakyRuns: 1, mixedProducts: 1) }
            if n % 11 == 0, !r.attempts.isEmpty { r.attempts[0].duration = .nan }
            return r
        }
    }

    /// A report of these results, as one JSONEncoder writes it (pretty up to the limit, one line above it), and as
    /// the report writer does.
    func both(_ results: [TestResult]) throws -> (written: String, expected: String) {
        var report = Sample.report()
        report.results = results
        let pretty = results.count <= JSONReportWriter.indentedResultLimit
        let expected = try JSONReportWriter.encoder(indented: pretty).encode(report) + [0x0A]
        return (String(decoding: try JSONReportWriter().encode(report), as: UTF8.self), String(decoding: expected, as: UTF8.self))
    }

    @Test func resultsAreWrittenByteForByteAsJSONEncoderWritesThemPrettyAndOnOneLine() throws {
        let results = results()
        let pretty = try both(results)
        #expect(pretty.written == pretty.expected)
        #expect(pretty.written.contains("\n      \"attempts\" : [\n"), "indented")
        // One result at a time, for a failure that says which.
        for r in results {
            let one = try both([r])
            #expect(one.written == one.expected, "\(r.id)")
        }
        let none = try both([])
        #expect(none.written == none.expected)
        let large = (0..<(JSONReportWriter.indentedResultLimit + 1)).map { results[$0 % results.count] }
        let line = try both(large)
        #expect(line.written == line.expected)
        #expect(!line.written.dropLast().contains("\n"), "one line")
    }

    @Test func numbersAndStringsAreSpelledAsJSONEncoderSpellsThem() throws {
        for value in [0.0, -0.0, 1, -3.5, 1e15, 1e16, 1.2345678901234568e+16, 1e-7, .leastNonzeroMagnitude, .greatestFiniteMagnitude] {
            var w = ResultsJSON.Writer(pretty: false)
            w.number(value)
            #expect(String(decoding: w.out, as: UTF8.self) == String(decoding: try encoder.encode([value]), as: UTF8.self).dropFirst().dropLast(),
                    "\(value)")
        }
        let strings = ["", "plain", "\"\\/", (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }.joined(), "\u{7F}é😀\u{2028}\u{FEFF}"]
        for text in strings {
            var w = ResultsJSON.Writer(pretty: false)
            w.string(text)
            #expect(w.out == Array(try encoder.encode([text]).dropFirst().dropLast()), "\(text.debugDescription)")
        }
    }

    /// A field added to one of these types must be written by `ResultsJSON` too: this count fails until it is.
    @Test func theWriterKnowsEveryFieldOfTheTypesItSpellsOut() {
        func fields(_ value: Any) -> Int { Mirror(reflecting: value).children.count }
        let r = results()[1]
        #expect(fields(r) == 9, "TestResult: attempts, destination, flakeScore, framework, id, orderDependence, outcome, quarantine, repeats")
        #expect(fields(attempt(0)) == 14, "Attempt")
        #expect(fields(Issue(kind: .other, message: "")) == 4, "Issue")
        #expect(fields(r.id) == 2 && fields(r.id.suite) == 2, "TestID, SuiteID")
        #expect(fields(SourceLocation(file: "", line: 0)) == 2, "SourceLocation")
    }
}

/// `ResultsJSONReader` reads report.json's results without JSONDecoder: what it reads must be what JSONDecoder reads,
/// from the writer's output and from JSON the writer would never write; and whatever it does not take, it leaves to
/// JSONDecoder, whose errors say where.
@Suite struct ResultsJSONReaderTests {
    let writing = ResultsJSONTests()

    func viaDecoder(_ data: Data) throws -> RunReport { try JSONConventions.decoder().decode(RunReport.self, from: data) }
    func fast(_ data: Data) -> RunReport? { ResultsJSONReader.decode(data, decoder: JSONConventions.decoder()) }
    /// Compared as written, since NaN is not equal to itself.
    func same(_ a: RunReport?, _ b: RunReport) throws -> Bool {
        guard let a else { return false }
        let encoder = JSONReportWriter.encoder(indented: false)
        return try encoder.encode(a) == encoder.encode(b)
    }

    @Test func whatTheWriterWritesIsReadAsJSONDecoderReadsItPrettyAndOnOneLine() throws {
        var report = Sample.report()
        for results in [writing.results(), (0..<(JSONReportWriter.indentedResultLimit + 1)).map { writing.results()[$0 % 60] }] {
            report.results = results
            let data = try JSONReportWriter().encode(report)
            #expect(try same(fast(data), viaDecoder(data)))
        }
        report.results = []
        let empty = try JSONReportWriter().encode(report)
        #expect(try same(fast(empty), viaDecoder(empty)))
    }

    @Test func jsonTheWriterWouldNotWriteIsReadAsJSONDecoderReadsIt() throws {
        var report = Sample.report()
        report.results = []
        let head = String(decoding: try JSONReportWriter.encoder(indented: false).encode(report), as: UTF8.self)
        let results = #"""
        [ { "outcome" : "failed", "id": {"suite": {"name": "S\u00e9", "module": "M"}, "name": "t\ud83d\ude00\/x \"q\" \\ \n"},
            "framework":"xctest", "destination":"local",
            "attempts":[{"unit":1,"outcome":"failed","issues":[{"message":"m","kind":"assertion","isFailure":true,
                         "location":{"line":3,"file":"f.swift"}}],"duration":1.5E-3,"agent":"a"}] },
          {"attempts":[{"agent":"a","duration":2,"issues":[],"outcome":"passed","unit":2,"cpuSeconds":null}],
           "destination":"local","framework":"xctest","id":{"name":"u","suite":{"module":"M","name":"S"}},
           "outcome":"passed","somethingNewer":{"a":[1,{"b":"]"}]}},
          {"attempts":[{"agent":"a","duration":"NaN","issues":[],"outcome":"passed","unit":3}],
           "destination":"local","framework":"xctest","id":{"name":"v","suite":{"module":"M","name":"S"}},"outcome":"passed"}
        ]
        """#
        let data = Data(head.replacingOccurrences(of: #""results":[]"#, with: #""results" : "# + results).utf8)
        let read = try #require(fast(data), "taken: the unusual results went through JSONDecoder one by one")
        #expect(try same(read, viaDecoder(data)))
        #expect(read.results.map(\.id.name) == ["t😀/x \"q\" \\ \n", "u", "v"])
        #expect(read.results[0].id.suite.name == "Sé" && read.results[0].attempts[0].duration == 0.0015)
    }

    @Test func whatIsWrongIsLeftToJSONDecoderAndItsErrors() throws {
        var report = Sample.report()
        report.results = Array(writing.results().prefix(3))
        let good = String(decoding: try JSONReportWriter().encode(report), as: UTF8.self)
        for broken in [good.replacingOccurrences(of: #""outcome" : "passed""#, with: #""outcome" : "bogus""#),
                       good.replacingOccurrences(of: #""unit" : 1"#, with: #""unit" : "1""#),
                       String(good.dropLast(3)),
                       good.replacingOccurrences(of: #""results" : ["#, with: #""results" : {"#)] {
            #expect(fast(Data(broken.utf8)) == nil)
            #expect(throws: ReportDecodingError.self) { try JSONReportReader().decode(Data(broken.utf8)) }
        }
    }
}
