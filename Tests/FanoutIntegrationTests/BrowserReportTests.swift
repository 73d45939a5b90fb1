import FanoutAgents
import FanoutCore
import Foundation
import Testing

/// report.html as a person sees it: a real run's report opened in headless Chromium (scripts/setup.sh installs it),
/// its DOM read back after the browser parsed it.
@Suite(.serialized, .timeLimit(.minutes(4))) struct BrowserReportTests {
    /// The DOM Chromium builds from the page (`--dump-dom`).
    func dom(of page: String) async throws -> String {
        let command = Command(executable: "/usr/bin/chromium",
                              arguments: ["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "file://" + page])
        let (ending, out, err) = await LocalTransport(slots: 1).capture(command, timeout: 120)
        guard ending == .exited(0) else {
            throw TestFailure("chromium \(ending): \(String(decoding: err, as: UTF8.self).suffix(2000))")
        }
        return String(decoding: out, as: UTF8.self)
    }

    func occurrences(of needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

    @Test func aRealRunsPageShowsItsVerdictFailuresAndOneBarPerUnitAndHostileTextStaysText() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let config = dir.file("fanout.yml")
        try "destination:\n  name: local\n  environment: { DEMO_FAIL: \"1\", DEMO_LATENCY_SCALE: \"0.1\" }\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let (code, out, err) = try await runCLI(["run", "--config", config, "--bundle", bundle, "--skip", "SessionTimeout|Straggler",
                                                 "--slots", "4", "--report-dir", dir.file("r"), "--history", dir.file("h.sqlite")],
                                                cwd: dir.path)
        #expect(code == 1, "\(out)\(err)")
        let data = try Data(contentsOf: URL(fileURLWithPath: dir.file("r/report.json")))
        let report = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        let units = (report["units"] as? [[String: Any]])?.count ?? 0
        let results = (report["results"] as? [[String: Any]])?.count ?? 0
        #expect(units > 1)

        let page = try await dom(of: dir.file("r/report.html"))
        #expect(page.contains("FAILED"))
        #expect(page.contains("\(results) tests"), "the header counts every test")
        #expect(page.contains("DemoKitTests.ArithmeticTests/testMultiply"), "the failing test is listed")
        #expect(page.contains("deliberate failure"), "with its message")
        #expect(occurrences(of: "<rect class=\"unit ", in: page) == units, "one timeline bar per unit")

        // The same report with hostile text where test output goes, rendered by the CLI and parsed by the browser.
        var text = String(decoding: data, as: UTF8.self)
        let payload = #"<img src=x onerror=alert(1)><script>document.title='owned'</script>"#
        let escapedForJSON = payload.replacingOccurrences(of: "\"", with: "\\\"")
        text = text.replacingOccurrences(of: "deliberate failure", with: "deliberate failure " + escapedForJSON)
        try text.write(toFile: dir.file("hostile.json"), atomically: true, encoding: .utf8)
        let (hc, _, herr) = try await runCLI(["report", "html", "--from", dir.file("hostile.json"), "--out", dir.file("hostile.html")])
        #expect(hc == 0, "\(herr)")
        let hostile = try await dom(of: dir.file("hostile.html"))
        #expect(!hostile.contains("<img"), "no element was injected")
        #expect(!hostile.contains("<script"), "no script was injected")
        #expect(!hostile.contains("<title>owned"), "no script ran")
        #expect(hostile.contains("&lt;img src=x onerror=alert(1)&gt;"), "the payload shows as text")
    }

    @Test func aSecondRunsPageDrawsATrendChartPerMetricWithTheEarlierRunAndThisOne() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        var last = ""
        for run in 1...2 {
            let (code, out, err) = try await runCLI(["run", "--bundle", bundle, "--filter", "Performance", "--slots", "2",
                                                     "--report-dir", dir.file("r\(run)"), "--history", dir.file("h.sqlite")],
                                                    cwd: dir.path)
            #expect(code == 0, "\(out)\(err)")
            last = dir.file("r\(run)")
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: last + "/report.json"))
        let report = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        let measured = (report["measurements"] as? [[String: Any]]) ?? []
        let trended = measured.filter { ((($0["trend"] as? [String: Any])?["runs"] as? [[String: Any]]) ?? []).count == 1 }
        #expect(!measured.isEmpty && trended.count == measured.count, "every metric has the first run as its past")

        let page = try await dom(of: last + "/report.html")
        #expect(occurrences(of: "<svg class=\"trend\"", in: page) == trended.count, "one chart per metric")
        #expect(occurrences(of: "<circle class=\"point past\"", in: page) == trended.count, "the earlier run, once per chart")
        #expect(occurrences(of: "<circle class=\"point this-run", in: page) == trended.count, "and this run")
    }
}
