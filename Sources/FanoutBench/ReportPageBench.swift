import ArgumentParser
import FanoutCore
import Foundation

/// `fanout-bench report-page`: how long a browser takes to show report.html of a large run. It writes a report.json
/// of `--tests` tests with `--failures` failures (the shape of the writer's 5 MB test: two destinations, 200 units
/// with 400-line logs, 2,000-character messages, 300-frame backtraces; plus measurements with their trends), has the
/// real CLI render it (`fanout report html --from … --out …`), and opens copies of the page in headless Chromium
/// with a measuring script injected into the copies only (the product page has no script). The script records, in
/// the load event, `performance.now()` (milliseconds since navigation started) before and after forcing style and
/// layout of the whole document, and the number of elements, as attributes that `--dump-dom` reads back.
///
/// Beside the page it loads three controls, in turn with it so that the machine's noise falls on all alike: the page
/// without its `content-visibility` rules (what they save), without its failures section (what the rest costs), and
/// an empty page with the same script (the floor). Every figure is kept per load; the documents show each as the
/// median with its fastest and slowest (``ReportPageFigures``).
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
    @Option(help: "Renders, and loads of each page, measured (at least 3): every figure is their median with its range.")
    var repeats = 5
    @Option(help: "Scratch folder (never the repo).")
    var dir = "/tmp/fanout-bench/report-page"
    @Option(help: "Where to write the results (JSON; \(ReportPageFigures.dataPath) is the committed one).")
    var json: String?
    @Option(help: "A Markdown file whose marked page-load figures are rewritten from these results (\(ReportPageFigures.docPath)).")
    var doc: String?
    @Option(help: "The command that produced the results, as a person would type it.")
    var command = "scripts/bench.sh --page"
    @OptionGroup var repository: RepositoryOption

    func validate() throws {
        guard repeats >= 3 else {
            throw ValidationError("--repeats must be at least 3: every figure is a median with its min–max range")
        }
    }

    mutating func run() async throws {
        Interrupts.install()
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let report = LargeReport.make(tests: tests, failures: failures)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let reportPath = dir + "/report.json", pagePath = dir + "/report.html"
        try encoder.encode(report).write(to: URL(fileURLWithPath: reportPath))

        var renders: [Double] = []
        for _ in 0..<repeats {
            let render = try await Processes.check(fanout, ["report", "html", "--from", reportPath, "--out", pagePath],
                                                   timeout: 300)
            renders.append(render.seconds)
        }
        let page = try String(contentsOfFile: pagePath, encoding: .utf8)
        var copies: [PageVariant: String] = [:]
        for variant in PageVariant.allCases {
            let path = "\(dir)/measured-\(variant.rawValue).html"
            try variant.measuredCopy(of: page).write(toFile: path, atomically: true, encoding: .utf8)
            copies[variant] = path
        }

        let loadBefore = Self.loadAverage()
        var loads: [PageVariant: [PageLoad]] = [:]
        for i in 0..<repeats {
            for variant in PageVariant.allCases {
                let profile = "\(dir)/profile" // fresh for each load: no cache from the previous one
                try? FileManager.default.removeItem(atPath: profile)
                let r = try await Processes.check(chromium, [
                    "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile)", "--window-size=1280,900",
                    "--dump-dom", "file://" + (copies[variant] ?? ""),
                ], timeout: 300)
                guard let load = PageLoad(dom: r.stdout, processSeconds: r.seconds) else {
                    throw BenchError("the measuring script left no figures in the page Chromium built:\n\(r.tail)")
                }
                loads[variant, default: []].append(load)
                progress("load \(i + 1), \(variant.rawValue): \(load.line)")
            }
        }
        let result = ReportPageResult(
            command: command, machine: await BenchReport.machine(repo: repository.repo),
            loadAverage: "\(loadBefore) before, \(Self.loadAverage()) after",
            chromium: await Processes.run(chromium, ["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines),
            tests: report.results.count, failures: report.counts.failures, reportBytes: try size(reportPath),
            pageBytes: page.utf8.count, loads: repeats, renderSeconds: renders,
            pages: PageVariant.allCases.map { PageLoads($0, loads[$0] ?? []) })
        if let json { try JSONFiles.write(result, to: json) }
        if let doc { try ReportPageFigures.Regenerated(doc: doc, result: result).write() }
        print(ReportPageFigures.block(result))
    }

    /// The 1-, 5- and 15-minute load averages: on a shared machine the figures mean little without them.
    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    private func size(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    /// Injected into the copies only. Style and layout of everything are forced in the load event, so `laidOut` is
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

/// A page the bench loads: report.html as `fanout report html` wrote it, or one of its controls.
enum PageVariant: String, Codable, Sendable, CaseIterable {
    case page
    /// Its `content-visibility: auto` rules taken out: the browser lays out every failure entry and table at once.
    case withoutContentVisibility = "without-content-visibility"
    /// Its failures section taken out: what the rest of the page costs.
    case withoutFailures = "without-failures"
    /// An empty page with the same script: the browser's own floor.
    case empty

    /// What the documents call it.
    var label: String {
        switch self {
        case .page: "report.html"
        case .withoutContentVisibility: "the same without its `content-visibility` rules"
        case .withoutFailures: "the same without its failures section"
        case .empty: "an empty page with the same script"
        }
    }

    /// The page as loaded: this variant of `page`, with the measuring script as the first thing in its `<head>`.
    func measuredCopy(of page: String) throws -> String {
        var copy: String
        switch self {
        case .page:
            copy = page
        case .withoutContentVisibility:
            guard page.contains("content-visibility: auto;") else {
                throw BenchError("report.html has no `content-visibility: auto;` rule to take out: update PageVariant")
            }
            copy = page.replacingOccurrences(of: "content-visibility: auto;", with: "")
        case .withoutFailures:
            guard let start = page.range(of: "<section id=\"failures\">"),
                  let end = page.range(of: "</section>", range: start.upperBound..<page.endIndex) else {
                throw BenchError("report.html has no failures section to take out: update PageVariant")
            }
            copy = page
            copy.removeSubrange(start.lowerBound..<end.upperBound)
        case .empty:
            copy = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>empty</title>\n</head>\n"
                + "<body></body>\n</html>\n"
        }
        guard let head = copy.range(of: "<head>") else { throw BenchError("the \(rawValue) page has no <head>") }
        copy.insert(contentsOf: "\n" + ReportPage.probe, at: head.upperBound)
        return copy
    }
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

/// Every load of one page, figure by figure, in the order they ran. A figure that a load did not record before
/// Chromium dumped the page (the next frame, first contentful paint) has fewer values than there were loads.
struct PageLoads: Codable, Sendable {
    var page: PageVariant
    var elements: Int
    /// Milliseconds since navigation started.
    var firstContentfulPaintMs: [Double]
    var domContentLoadedMs: [Double]
    var loadMs: [Double]
    var laidOutMs: [Double]
    var frameMs: [Double]
    /// The whole headless Chromium process (start-up and shut-down included), for context.
    var processSeconds: [Double]

    init(_ page: PageVariant, _ loads: [PageLoad]) {
        self.page = page
        self.elements = loads.first?.elements ?? 0
        self.firstContentfulPaintMs = loads.compactMap(\.firstContentfulPaintMs)
        self.domContentLoadedMs = loads.map(\.domContentLoadedMs)
        self.loadMs = loads.map(\.loadMs)
        self.laidOutMs = loads.map(\.laidOutMs)
        self.frameMs = loads.compactMap(\.frameMs)
        self.processSeconds = loads.map(\.processSeconds)
    }
}

/// What `fanout-bench report-page` measured (docs/report-page-results.json): every value of every load kept.
struct ReportPageResult: Codable, Sendable {
    var command: String
    var machine: MarkdownReport.Machine
    /// The machine's load averages before and after the loads: on a shared machine they say how noisy it was.
    var loadAverage: String
    var chromium: String
    var tests: Int
    var failures: Int
    var reportBytes: Int
    var pageBytes: Int
    /// Renders, and loads of each page.
    var loads: Int
    /// `fanout report html` each time: reading report.json and writing the page, process start included.
    var renderSeconds: [Double]
    /// One per ``PageVariant``, the page first.
    var pages: [PageLoads]
}
