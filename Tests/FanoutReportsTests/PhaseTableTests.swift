import FanoutCore
import FanoutReports
import Testing

/// `fanout run --timings`: every phase with its seconds and share, the time outside the tests, the report files.
@Suite struct PhaseTableTests {
    @Test func everyPhaseItsShareAndTheTimeOutsideTheTests() {
        let text = PhaseTable.render([
            PhaseTime("start-up", seconds: 0.1), PhaseTime("discover", seconds: 0.4), PhaseTime("tests", seconds: 9),
            PhaseTime("reports", seconds: 0.5),
        ], files: [PhaseTime("report.json", seconds: 0.3), PhaseTime("junit.xml", seconds: 0.45)])
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first == "Timings: 10.0 s in all, 1.00 s of it outside the tests")
        #expect(lines.count == 5)
        #expect(lines[1] == "  start-up      0.100 s   1 %")
        #expect(lines[3] == "  tests         9.000 s  90 %")
        #expect(lines[4] == "  reports       0.500 s   5 %  (at once: report.json 0.300 s, junit.xml 0.450 s)")
    }

    @Test func aReportWithoutPhasesSaysSo() {
        #expect(PhaseTable.render([]) == "Timings: none were kept for this run")
    }
}
