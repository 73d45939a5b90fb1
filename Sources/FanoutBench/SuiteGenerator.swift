import FanoutCore
import Foundation

/// The shapes of generated suites the benchmark runs.
enum SuiteShape: String, CaseIterable, Codable, Sendable {
    /// ~60 classes with lognormal durations (a few long ones), 60-90 s in all.
    case lognormal
    /// 3,000 test methods of 2-10 ms over 60 classes: per-process overhead decides.
    case manySmall = "many-small"
    /// One class holding ~45 % of the time over 40 methods, plus 40 small classes: only splitting by methods helps.
    case dominant
    /// Like a real wait-bound suite seen in the field: 4 long classes of 15-26 methods (22, 12, 8 and 6 s) and 54
    /// tiny ones: a first run without history must not leave one long class to run whole.
    case skewed
    /// Lognormal classes whose methods COMPUTE (a hash loop) instead of waiting: 8 slots on 2 cores cannot all run.
    case cpuBound = "cpu-bound"
    /// Waiting and computing classes, like a real suite seen in the field: one class of 16 methods whose 4 heaviest
    /// compute 8-12 s each (40 s of CPU), 12 computing classes of 4-10 s, waiting classes of as much time, and 180
    /// small classes of tens of ms. With 8 slots on 2 cores, the heavy class's tests take several times their
    /// serial time: a slow test that is not a hung one. (Last in this list: a shape's position seeds its suite.)
    case mixed
    /// 200 waiting tests over 20 classes, 5 s in all: the suite of the `--repeat 20` benchmark (`fanout-bench repeat`).
    case twoHundred = "two-hundred"

    var packageName: String {
        switch self {
        case .lognormal: "BenchLognormal"
        case .manySmall: "BenchManySmall"
        case .dominant: "BenchDominant"
        case .skewed: "BenchSkewed"
        case .cpuBound: "BenchCPUBound"
        case .mixed: "BenchMixed"
        case .twoHundred: "BenchTwoHundred"
        }
    }

    /// True when the methods compute rather than wait: the machine's cores, not the slots, bound the run.
    var computes: Bool { self == .cpuBound }
    /// True when some or all methods compute: the machine's cores bound the run, not only the slots.
    var hasComputingTests: Bool { computes || self == .mixed }
    /// What the methods do, for tables: `waiting`, `computing`, or `waiting + computing`.
    var work: String { self == .mixed ? "waiting + computing" : computes ? "computing" : "waiting" }

    var moduleName: String { packageName + "Tests" }

    var summary: String {
        switch self {
        case .lognormal: "Lognormal class durations (σ = 1), a few long ones, 2-16 methods per class"
        case .manySmall: "Many small tests: 50 methods of 2-10 ms per class"
        case .dominant: "One dominant class with 45 % of the time over 40 methods, plus small classes"
        case .skewed: "Four long classes of 15-26 methods (22, 12, 8, 6 s) and 54 tiny classes"
        case .cpuBound: "Lognormal class durations whose methods compute (a hash loop, one core each) instead of waiting"
        case .mixed: "Waiting + computing classes: one class of 16 methods whose 4 heaviest compute 8-12 s each (40 s), "
            + "12 computing classes of 4-10 s, waiting classes of as much time, 180 small computing classes of tens of ms"
        case .twoHundred: "200 waiting tests over 20 classes of 10, 5 s in all (lognormal): the suite of the --repeat benchmark"
        }
    }
}

/// A generated class: its name and the seconds each of its test methods waits (or computes), in method order.
struct GeneratedClass: Codable, Sendable, Hashable {
    var name: String
    var methods: [Double]
    /// Whether its methods compute rather than wait; nil: as the suite's shape says (`SuiteShape.computes`).
    var computes: Bool? = nil

    var total: Double { methods.reduce(0, +) }
    static func methodName(_ i: Int) -> String { "test" + String(repeating: "0", count: max(0, 3 - String(i).count)) + String(i) }
}

/// The description of a generated suite, written next to the package as `suite.json`.
struct GeneratedSuite: Codable, Sendable {
    var shape: SuiteShape
    var seed: UInt64
    var packageName: String
    var moduleName: String
    var classes: [GeneratedClass]

    var serialTotal: Double { classes.reduce(0) { $0 + $1.total } }
    var methodCount: Int { classes.reduce(0) { $0 + $1.methods.count } }
    var longestClass: Double { classes.map(\.total).max() ?? 0 }
    var longestMethod: Double { classes.flatMap(\.methods).max() ?? 0 }
    /// Seconds of the methods that compute (all of them in cpu-bound, none in the waiting shapes).
    var computingTotal: Double { classes.filter { computes($0) }.reduce(0) { $0 + $1.total } }
    func computes(_ c: GeneratedClass) -> Bool { c.computes ?? shape.computes }

    /// Method-level lower bound on `slots` slots, from the nominal waits.
    func nominalLowerBound(slots: Int) -> Double { max(serialTotal / Double(slots), longestMethod) }
}

/// Makes seeded suites: durations are drawn once and written into the source as literals, so a suite is
/// self-contained and runs the same way on every agent.
enum SuiteGenerator {
    static func make(shape: SuiteShape, seed: UInt64) -> GeneratedSuite {
        var rng = SeededRandom(seed: seed &* 1_000_003 &+ UInt64(SuiteShape.allCases.firstIndex(of: shape) ?? 0))
        var names = NamePool(rng: &rng)
        var classes: [GeneratedClass] = []
        switch shape {
        case .lognormal:
            let total = 75.0, count = 60
            var sizes = (0..<count).map { _ in rng.lognormal(mu: 0, sigma: 1) }
            // Keep every class below the time per slot at 8 slots: this shape is about packing, not splitting.
            sizes = normalize(sizes, to: total, cap: 0.75 * total / 8)
            for size in sizes {
                let n = Int(rng.uniform(2, 17))
                classes.append(GeneratedClass(name: names.next(), methods: split(size, into: n, sigma: 0.6, rng: &rng)))
            }
        case .manySmall:
            for _ in 0..<60 {
                classes.append(GeneratedClass(name: names.next(),
                                              methods: (0..<50).map { _ in round4(rng.uniform(0.002, 0.010)) }))
            }
        case .dominant:
            let total = 60.0, share = 0.45
            classes.append(GeneratedClass(name: "CheckoutFlowTests",
                                          methods: split(total * share, into: 40, sigma: 0.5, rng: &rng)))
            let sizes = normalize((0..<40).map { _ in rng.lognormal(mu: 0, sigma: 0.8) }, to: total * (1 - share),
                                  cap: 0.5 * total / 8)
            for size in sizes {
                let n = Int(rng.uniform(2, 13))
                classes.append(GeneratedClass(name: names.next(), methods: split(size, into: n, sigma: 0.6, rng: &rng)))
            }
        case .skewed:
            for (count, seconds) in [(26, 22.0), (20, 12.0), (18, 8.0), (15, 6.0)] {
                classes.append(GeneratedClass(name: names.next(), methods: split(seconds, into: count, sigma: 0.3, rng: &rng)))
            }
            let sizes = normalize((0..<54).map { _ in rng.lognormal(mu: 0, sigma: 0.7) }, to: 30, cap: 2)
            for size in sizes {
                let n = Int(rng.uniform(3, 9))
                classes.append(GeneratedClass(name: names.next(), methods: split(size, into: n, sigma: 0.6, rng: &rng)))
            }
            classes.shuffle(using: &rng) // the long classes are not first in any order
        case .cpuBound:
            let total = 24.0, count = 40
            let sizes = normalize((0..<count).map { _ in rng.lognormal(mu: 0, sigma: 1) }, to: total, cap: 0.75 * total / 8)
            for size in sizes {
                let n = Int(rng.uniform(2, 13))
                classes.append(GeneratedClass(name: names.next(), methods: split(size, into: n, sigma: 0.6, rng: &rng)))
            }
        case .mixed:
            classes = mixed(names: &names, rng: &rng)
        case .twoHundred:
            let sizes = normalize((0..<20).map { _ in rng.lognormal(mu: 0, sigma: 0.6) }, to: 5, cap: 0.6)
            for size in sizes {
                classes.append(GeneratedClass(name: names.next(), methods: split(size, into: 10, sigma: 0.5, rng: &rng)))
            }
        }
        return GeneratedSuite(shape: shape, seed: seed, packageName: shape.packageName, moduleName: shape.moduleName,
                              classes: classes)
    }

    /// The mixed suite's class of 16 methods, 4 of which compute 8-12 s each.
    static let heavyClass = "ReportRenderingTests"

    /// The mixed suite's classes (see `SuiteShape.mixed`), in a seeded order.
    static func mixed(names: inout NamePool, rng: inout SeededRandom) -> [GeneratedClass] {
        var classes: [GeneratedClass] = []
        // The heavy class: 12 quick methods (50-300 ms) and 4 that compute 40 s together, at seeded places.
        var heavy = (0..<16).map { _ in round4(rng.uniform(0.05, 0.3)) }
        let long = normalize((0..<4).map { _ in rng.uniform(9, 13) }, to: 40, cap: 12)
        var places = Array(0..<16)
        places.shuffle(using: &rng)
        for (place, seconds) in zip(places, long) { heavy[place] = round4(seconds) }
        classes.append(GeneratedClass(name: heavyClass, methods: heavy, computes: true))
        // Computing classes of a few seconds: with the heavy class, enough to keep both cores busy for a minute, so
        // the heavy class's tests share them with 3 to 7 others most of the time.
        for size in normalize((0..<12).map { _ in rng.lognormal(mu: 0, sigma: 0.4) }, to: 75, cap: 10) {
            let n = Int(rng.uniform(3, 11))
            classes.append(GeneratedClass(name: names.next(), methods: split(size, into: n, sigma: 0.6, rng: &rng),
                                          computes: true))
        }
        // Waiting classes (network, expectations, timers), as much time as the computing classes above.
        for size in normalize((0..<12).map { _ in rng.lognormal(mu: 0, sigma: 0.6) }, to: 115, cap: 15) {
            let n = Int(rng.uniform(4, 15))
            classes.append(GeneratedClass(name: names.next(), methods: split(size, into: n, sigma: 0.6, rng: &rng),
                                          computes: false))
        }
        // Many small classes: 2-30 quick methods of 1-6 ms each.
        for _ in 0..<180 {
            let n = Int(rng.uniform(2, 31))
            classes.append(GeneratedClass(name: names.next(), methods: (0..<n).map { _ in round4(rng.uniform(0.001, 0.006)) },
                                          computes: true))
        }
        classes.shuffle(using: &rng) // the heavy class is not first in any order
        return classes
    }

    /// Scales `values` to sum to `total`, with no value above `cap` (the excess is spread over the others).
    static func normalize(_ values: [Double], to total: Double, cap: Double) -> [Double] {
        var v = values
        for _ in 0..<50 {
            let sum = v.reduce(0, +)
            v = v.map { min(cap, $0 * total / sum) }
            if abs(v.reduce(0, +) - total) < 1e-9 { break }
        }
        return v
    }

    /// Splits `seconds` over `n` methods with lognormal weights, rounded to 0.1 ms (never below 1 ms).
    static func split(_ seconds: Double, into n: Int, sigma: Double, rng: inout SeededRandom) -> [Double] {
        let weights = (0..<n).map { _ in rng.lognormal(mu: 0, sigma: sigma) }
        let sum = weights.reduce(0, +)
        return weights.map { max(0.001, round4(seconds * $0 / sum)) }
    }

    static func round4(_ x: Double) -> Double { (x * 10_000).rounded() / 10_000 }

    // MARK: - Writing the package

    /// Writes the package into `directory` (created; generated files replaced) and `suite.json` beside it.
    static func write(_ suite: GeneratedSuite, to directory: URL) throws {
        let fm = FileManager.default
        let tests = directory.appendingPathComponent("Tests/\(suite.moduleName)")
        // Old class files of another seed must not linger: they would be compiled in.
        if fm.fileExists(atPath: tests.path) { try fm.removeItem(at: tests) }
        try fm.createDirectory(at: tests, withIntermediateDirectories: true)
        try writeIfChanged(manifest(suite), to: directory.appendingPathComponent("Package.swift"))
        try writeIfChanged(support, to: tests.appendingPathComponent("Pause.swift"))
        for c in suite.classes {
            try writeIfChanged(source(of: c, computes: suite.computes(c)),
                               to: tests.appendingPathComponent("\(c.name).swift"))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(suite).write(to: directory.appendingPathComponent("suite.json"))
    }

    /// Leaves an identical file untouched so that regenerating the same seed does not force a rebuild.
    static func writeIfChanged(_ text: String, to url: URL) throws {
        let data = Data(text.utf8)
        if let old = try? Data(contentsOf: url), old == data { return }
        try data.write(to: url)
    }

    static func manifest(_ suite: GeneratedSuite) -> String {
        """
        // swift-tools-version: 6.0
        // Generated by fanout-bench (shape \(suite.shape.rawValue), seed \(suite.seed)). \(workLine(suite))
        import PackageDescription

        let package = Package(
            name: "\(suite.packageName)",
            targets: [
                .testTarget(name: "\(suite.moduleName)", path: "Tests/\(suite.moduleName)"),
            ]
        )

        """
    }

    static func workLine(_ suite: GeneratedSuite) -> String {
        let computing = suite.classes.filter { suite.computes($0) }.count
        return computing == 0 ? "Test methods wait; nothing computes."
            : computing == suite.classes.count ? "Test methods compute (a hash loop)."
            : "Some classes compute (a hash loop, silently), the others wait."
    }

    static let support = """
        import Foundation

        /// Waits without using the CPU: the suites measure scheduling, not the machine's speed.
        /// BENCH_TIME_SCALE=0.01 shortens every wait (Fanout's tests check outcomes on these suites, not time).
        @inline(never)
        func pause(_ seconds: Double) {
            usleep(useconds_t(seconds * timeScale * 1_000_000))
        }

        /// Computes for about `seconds` on one core of the machine the benchmark was calibrated on (a debug build of
        /// this loop ran 180 million rounds a second there); under contention it takes longer, as real tests do.
        @inline(never)
        func spin(_ seconds: Double) {
            var x: UInt64 = 0x9E37_79B9_7F4A_7C15
            for _ in 0..<Int(seconds * timeScale * 180_000_000) { x ^= x << 13; x ^= x >> 7; x ^= x << 17 }
            if x == 42 { print("") } // keeps the loop from being optimised away
        }

        let timeScale: Double = {
            guard let text = ProcessInfo.processInfo.environment["BENCH_TIME_SCALE"], let scale = Double(text),
                  scale.isFinite, scale >= 0 else { return 1 }
            return scale
        }()

        """

    static func source(of c: GeneratedClass, computes: Bool = false) -> String {
        var s = "import XCTest\n\nfinal class \(c.name): XCTestCase {\n"
        for (i, d) in c.methods.enumerated() {
            s += "    func \(GeneratedClass.methodName(i))() { \(computes ? "spin" : "pause")(\(String(format: "%.4f", d))) }\n"
        }
        return s + "}\n"
    }
}

/// Distinct, unsorted class names (so that name order says nothing about size or generation order).
struct NamePool {
    static let first = ["Account", "Billing", "Cache", "Config", "Cursor", "Decoder", "Export", "Feed", "Gallery",
                        "Graph", "Import", "Index", "Journal", "Keychain", "Layout", "Ledger", "Locale", "Mail",
                        "Map", "Media", "Network", "Offline", "Parser", "Payment", "Profile", "Query", "Queue",
                        "Render", "Report", "Router", "Search", "Session", "Settings", "Share", "Storage", "Sync",
                        "Theme", "Timeline", "Upload", "Vault", "Widget", "Zip"]
    static let second = ["Actor", "Adapter", "Builder", "Client", "Coder", "Controller", "Engine", "Filter",
                         "Formatter", "Handler", "Loader", "Manager", "Mapper", "Merger", "Model", "Observer",
                         "Planner", "Pool", "Provider", "Reader", "Resolver", "Scanner", "Service", "Store",
                         "Validator", "View", "Writer"]
    private var order: [Int]
    private var position = 0

    init(rng: inout SeededRandom) {
        order = Array(0..<(Self.first.count * Self.second.count))
        order.shuffle(using: &rng)
    }

    mutating func next() -> String {
        let k = order[position % order.count]
        position += 1
        let suffix = position > order.count ? String(position / order.count) : ""
        return Self.first[k / Self.second.count] + Self.second[k % Self.second.count] + suffix + "Tests"
    }
}
