import ArgumentParser
import FanoutCore
import Foundation

/// `fanout-bench report-page`: how long a browser takes to show report.html of a large run. It writes a report.json
/// of `--tests` tests with `--failures` failures (the shape of the writer's 5 MB test: two destinations, 200 units
/// with 400-line logs, 2,000-character messages, 300-frame backtraces; plus measurements with their trends), has the
/// real CLI render it (`fanout report html --from … --out …`), and opens a copy of the page in headless Chromium
/// with a measuring script injected into the copy only (the product page has no script). The script records, in
/// the load event, `performance.now()` (milliseconds since navigation started) before and after forcing style and
/// layout of the whole document, and the number of elements, as attributes that `--dump-dom` reads back.
struct ReportPage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report-page",
        abstract: "Measure how long headless Chromium takes to load and lay out report.html of a 10,000-test run.")

    @Option(help: "Tests in the generated report (half on each of two destinations).")
    var tests = 10_000
    @Option(help: "Of them failing (every fifth test while they last; every other one of those crashed).")
    var failures = 2_000
    @Option(help: "The fanout executable that renders the page.")
    var fanout: String
    @Option(help: "The browser.")
    var chromium = "/usr/bin/chromium"
    @Option(help: "Page loads measured; the median is reported.")
    var repeats = 5
    @Option(help: "Scratch folder (never the repo).")
    var dir = "/tmp/fanout-bench/report-page"
    @Option(help: "Where to write the results (JSON).")
    var json: String?

    mutating func run() async throws {
        Interrupts.install()
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let report = LargeReport.make(tests: tests, failures: failures)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let reportPath = dir + "/report.json", pagePath = dir + "/report.html", copyPath = dir + "/measured.html"
        try encoder.encode(report).write(to: URL(fileURLWithPath: reportPath))

        let render = try await Processes.check(fanout, ["report", "html", "--from", reportPath, "--out", pagePath],
                                               timeout: 300)
        let page = try String(contentsOfFile: pagePath, encoding: .utf8)
        guard let head = page.range(of: "<head>") else { throw BenchError("\(pagePath) has no <head>") }
        var copy = page
        copy.insert(contentsOf: "\n" + Self.probe, at: head.upperBound)
        try copy.write(toFile: copyPath, atomically: true, encoding: .utf8)

        let loadBefore = Self.loadAverage()
        var loads: [PageLoad] = []
        for i in 0..<max(1, repeats) {
            let profile = "\(dir)/profile-\(i)" // a fresh profile: no cache from the previous load
            try? FileManager.default.removeItem(atPath: profile)
            let r = try await Processes.check(chromium, [
                "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile)", "--window-size=1280,900",
                "--dump-dom", "file://" + copyPath,
            ], timeout: 300)
            guard let load = PageLoad(dom: r.stdout, processSeconds: r.seconds) else {
                throw BenchError("the measuring script left no figures in the page Chromium built:\n\(r.tail)")
            }
            loads.append(load)
            progress("load \(i + 1): \(load.line)")
        }
        let result = ReportPageResult(
            tests: report.results.count, failures: report.counts.failures, reportBytes: try size(reportPath),
            pageBytes: page.utf8.count, elements: loads[0].elements, renderSeconds: render.seconds,
            firstContentfulPaintMs: medianIfAny(loads.compactMap(\.firstContentfulPaintMs)),
            domContentLoadedMs: medianOf(loads.map(\.domContentLoadedMs)), loadMs: medianOf(loads.map(\.loadMs)),
            laidOutMs: medianOf(loads.map(\.laidOutMs)), frameMs: medianIfAny(loads.compactMap(\.frameMs)),
            laidOutMsAll: loads.map(\.laidOutMs), frameMsAll: loads.compactMap(\.frameMs),
            chromiumProcessSeconds: medianOf(loads.map(\.processSeconds)),
            loadAverage: "\(loadBefore) before, \(Self.loadAverage()) after", cores: ProcessInfo.processInfo.activeProcessorCount,
            chromium: await Processes.run(chromium, ["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        if let json { try JSONFiles.write(result, to: json) }
        print(result.summary)
    }

    /// The 1-, 5- and 15-minute load averages: on a shared machine the figures mean little without them.
    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    private func size(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    /// Injected into the copy only. Style and layout of everything are forced in the load event, so `laidOut` is
    /// the moment the whole page could be painted; `frame` is the end of the first frame after it (the whole page
    /// painted), `fcp` Chromium's first contentful paint (the top of the page, before the rest has loaded).
    /// `--dump-dom` serializes the DOM once the page has loaded; a figure set after that is missing, never made up.
    static let probe = """
        <script>
        addEventListener('load', function () {
          var loaded = performance.now();
          void document.documentElement.scrollHeight; void document.body.getBoundingClientRect();
          var laidOut = performance.now();
          var nav = performance.getEntriesByType('navigation')[0];
          var root = document.documentElement;
          root.setAttribute('data-bench-dcl', nav ? nav.domContentLoadedEventEnd.toFixed(1) : '-1');
          root.setAttribute('data-bench-load', loaded.toFixed(1));
          root.setAttribute('data-bench-laid-out', laidOut.toFixed(1));
          root.setAttribute('data-bench-elements', String(document.getElementsByTagName('*').length));
          requestAnimationFrame(function () {
            setTimeout(function () {
              root.setAttribute('data-bench-frame', performance.now().toFixed(1));
              var fcp = performance.getEntriesByName('first-contentful-paint')[0];
              if (fcp) root.setAttribute('data-bench-fcp', fcp.startTime.toFixed(1));
            }, 0);
          });
        });
        </script>
        """
}

/// One page load's figures, read back from the DOM Chromium dumped.
struct PageLoad {
    var domContentLoadedMs: Double
    var loadMs: Double
    var laidOutMs: Double
    var frameMs: Double?
    var firstContentfulPaintMs: Double?
    var elements: Int
    var processSeconds: Double

    init?(dom: String, processSeconds: Double) {
        func attribute(_ name: String) -> Double? {
            guard let start = dom.range(of: "\(name)=\"") else { return nil }
            return Double(dom[start.upperBound...].prefix { $0 != "\"" })
        }
        guard let dcl = attribute("data-bench-dcl"), let load = attribute("data-bench-load"),
              let laidOut = attribute("data-bench-laid-out"), let elements = attribute("data-bench-elements") else { return nil }
        self.domContentLoadedMs = dcl
        self.loadMs = load
        self.laidOutMs = laidOut
        self.elements = Int(elements)
        self.frameMs = attribute("data-bench-frame")
        self.firstContentfulPaintMs = attribute("data-bench-fcp")
        self.processSeconds = processSeconds
    }

    var line: String {
        "first contentful paint \(optional(firstContentfulPaintMs)), DOMContentLoaded \(f1(domContentLoadedMs)) ms, "
            + "load \(f1(loadMs)) ms, laid out \(f1(laidOutMs)) ms, next frame \(optional(frameMs)), \(elements) elements; "
            + "chromium process \(f2(processSeconds)) s"
    }
}

/// `12.3 ms`, or `missing` for a figure the page did not record before it was dumped.
func optional(_ ms: Double?) -> String { ms.map { "\(f1($0)) ms" } ?? "missing" }

/// The median, nil when no load recorded the figure.
func medianIfAny(_ values: [Double]) -> Double? { values.isEmpty ? nil : medianOf(values) }

struct ReportPageResult: Codable, Sendable {
    var tests: Int
    var failures: Int
    var reportBytes: Int
    var pageBytes: Int
    var elements: Int
    /// `fanout report html`: reading report.json and writing the page, process start included.
    var renderSeconds: Double
    /// Milliseconds since navigation started, each the median over the loads (`nil`: no load recorded it).
    var firstContentfulPaintMs: Double?
    var domContentLoadedMs: Double
    var loadMs: Double
    var laidOutMs: Double
    var frameMs: Double?
    var laidOutMsAll: [Double]
    var frameMsAll: [Double]
    /// The whole headless Chromium process (start-up and shut-down included), for context.
    var chromiumProcessSeconds: Double
    /// The machine's load averages before and after the loads, and its cores.
    var loadAverage: String
    var cores: Int
    var chromium: String

    var summary: String {
        """
        report.html of \(tests) tests with \(failures) failures: report.json \(f1(Double(reportBytes) / 1_048_576)) MiB, \
        page \(f1(Double(pageBytes) / 1_048_576)) MiB, \(elements) elements; rendered by `fanout report html` in \
        \(f2(renderSeconds)) s
          \(chromium), medians of \(laidOutMsAll.count) loads, in ms after navigation started: first contentful paint \
        \(optional(firstContentfulPaintMs)), DOMContentLoaded \(f1(domContentLoadedMs)) ms, load \(f1(loadMs)) ms, \
        style and layout of the whole page done \(f1(laidOutMs)) ms (each load: \
        \(laidOutMsAll.map { f1($0) }.joined(separator: ", "))), the next frame painted \(optional(frameMs)) (each load \
        that recorded it: \(frameMsAll.map { f1($0) }.joined(separator: ", "))); the whole chromium process \
        \(f2(chromiumProcessSeconds)) s; \(cores) cores, load average \(loadAverage)
        """
    }
}
