import FanoutCore
import Foundation
import Testing
@testable import FanoutRunners

/// The parsers read whatever a test process writes, and a crashing, hung or hostile process writes anything: they
/// must never trap, hang or grow memory beyond their input, and their events must keep the promises the collector
/// relies on. This fuzzer is deterministic (SplitMix64, seeded): `FANOUT_FUZZ_SEED` and `FANOUT_FUZZ_INPUTS` replay a
/// failure or lengthen the run (`scripts/fuzz.sh`); `FANOUT_FUZZ_SHARD` replays one shard only. The defaults keep
/// `swift test` short.
@Suite(.timeLimit(.minutes(10))) struct FuzzTests {
    /// At least a million inputs: random bytes, mutated real captures, structure-aware XCTest, Swift Testing and
    /// xcodebuild streams (well-formed ones checked against the events they must give), listings, result bundles
    /// and .xctestrun files, and the line splitter, every stream fed in random chunks.
    @Test func parsersSurviveRandomAndMutatedOutput() async throws {
        let settings = FuzzSettings.fromEnvironment()
        let corpus = try FuzzCorpus.load()
        let clock = ContinuousClock()
        let start = clock.now
        let results = await withTaskGroup(of: FuzzShardResult.self) { group in
            for (index, count) in settings.shards where settings.onlyShard.map({ $0 == index }) ?? true {
                group.addTask {
                    var shard = FuzzShard(index: index, seed: settings.seed, corpus: corpus)
                    shard.trace = settings.traceFolder
                    shard.run(count, only: settings.onlyKind)
                    return shard.result
                }
            }
            var all: [FuzzShardResult] = []
            for await result in group { all.append(result) }
            return all.sorted { $0.shard < $1.shard }
        }
        let elapsed = start.duration(to: clock.now)
        let seconds = elapsed.seconds
        var total = FuzzShardResult(shard: -1)
        for r in results { total.add(r) }
        print("""
            fuzz: \(total.inputs) inputs in \(String(format: "%.2f", seconds)) s \
            (\(Int(Double(total.inputs) / max(seconds, 1e-9))) inputs/s), seed \(settings.seedText), \
            \(total.lines) lines, \(total.events) events, \(total.oracleChecks) exact-oracle checks (\(total.oracleSummary)), \
            \(total.chunkChecks) chunk-invariance checks, \(total.listingsThrown)/\(total.listings) listings rejected, \
            \(total.bundlesThrown)/\(total.bundles) result bundles rejected, \
            slowest input \(String(format: "%.1f", total.slowest * 1000)) ms, \
            \(String(format: "%.1f", total.parseSeconds)) of \(String(format: "%.1f", total.secondsByKind.reduce(0, +))) s in parsers, \
            \(String(format: "%.1f", total.generateSeconds)) s making inputs
            fuzz: by kind \(FuzzShard.Kind.allCases.indices.map { i in
                "\(FuzzShard.Kind.allCases[i].rawValue) \(total.byKind[i]) (\(String(format: "%.2f", total.secondsByKind[i])) s)"
            }.joined(separator: ", "))
            """)
        for (signature, count) in total.signatures.sorted(by: { $0.value > $1.value }) {
            print("fuzz: \(count) × \(signature)")
        }
        for failure in total.failures.prefix(12) {
            // A shard's inputs depend only on the seed and the shard's number: replaying it alone takes a second.
            Testing.Issue.record("""
                \(failure.text)
                replay: FANOUT_FUZZ_SEED=\(settings.seedText) FANOUT_FUZZ_SHARD=\(failure.shard) \
                swift test --skip-build --filter FuzzTests/parsersSurvive
                """)
        }
        #expect(total.failures.count == 0, "\(total.failures.count) inputs broke an invariant")
        // A parser that hangs or goes quadratic shows up as one slow input among small ones.
        #expect(total.slowest < 10, "no input is pathological (quadratic): one took \(total.slowest) s: \(total.slowestInput)")
        if settings.onlyShard == nil, settings.onlyKind == nil {
            #expect(total.inputs >= 1_000_000)
            #expect(total.inputs >= settings.inputs)
        }
        // A fuzzer whose exact checks never ran passes without checking: each oracle must have run its share (a
        // single shard is too small to ask; a run of one kind still draws all its inputs).
        if settings.onlyShard == nil {
            for oracle in FuzzOracle.allCases where settings.onlyKind.map({ $0 == oracle.kind }) ?? true {
                let minimum = oracle.minimumPerMillion * settings.inputs / 1_000_000
                #expect(total.oracleRuns[oracle.rawValue] >= minimum,
                        "the \(oracle.name) oracle ran \(total.oracleRuns[oracle.rawValue]) times in \(total.inputs) inputs, fewer than \(minimum)")
            }
        }
    }

    /// Large adversarial inputs: parsing four times as much must take about four times as long, not sixteen.
    @Test(arguments: FuzzScaling.Case.allCases)
    func parsersStayLinearOnLargeInputs(_ scaling: FuzzScaling.Case) {
        var best = Double.infinity
        var report = ""
        // Timing on a shared machine is noisy: a case passes when any of three tries looks linear.
        for _ in 0..<3 {
            let small = FuzzScaling.time(scaling, size: 1)
            let large = FuzzScaling.time(scaling, size: 4)
            let ratio = large / max(small, 0.002)
            report = "\(scaling): \(small) s for 1x, \(large) s for 4x"
            best = min(best, ratio)
            if best < 10 { break }
        }
        #expect(best < 10, "\(report): grows faster than linearly")
    }
}

// MARK: - Settings

struct FuzzSettings: Sendable {
    static let minimumInputs = 1_000_000
    static let defaultSeed: UInt64 = 0x00F4_0075_EED0_2026
    /// Inputs per shard: shards run in parallel and each has its own seed, so results do not depend on scheduling.
    static let shardSize = 20_000

    var inputs: Int
    var seed: UInt64
    var seedText: String
    var onlyShard: Int?
    /// Only inputs of this kind (for profiling one generator); the others are drawn but not run.
    var onlyKind: FuzzShard.Kind?
    /// A folder where each shard writes the input it is about to parse (`shard-N.stdout`/`.stderr`, removed when
    /// the shard ends): what a crash leaves behind is the input that crashed.
    var traceFolder: String?

    static func fromEnvironment() -> FuzzSettings {
        let env = ProcessInfo.processInfo.environment
        let inputs = max(minimumInputs, env["FANOUT_FUZZ_INPUTS"].flatMap { Int($0.replacingOccurrences(of: "_", with: "")) } ?? 0)
        let seedText = env["FANOUT_FUZZ_SEED"].flatMap { $0.isEmpty ? nil : $0 }
        let seed = seedText.flatMap(parseSeed) ?? defaultSeed
        return FuzzSettings(inputs: inputs, seed: seed, seedText: seedText ?? String(defaultSeed),
                            onlyShard: env["FANOUT_FUZZ_SHARD"].flatMap { Int($0) },
                            onlyKind: env["FANOUT_FUZZ_KIND"].flatMap { FuzzShard.Kind(rawValue: $0) },
                            traceFolder: env["FANOUT_FUZZ_TRACE"].flatMap { $0.isEmpty ? nil : $0 })
    }

    /// Decimal or 0x-hex.
    static func parseSeed(_ text: String) -> UInt64? {
        text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
    }

    var shards: [(Int, Int)] {
        let count = (inputs + Self.shardSize - 1) / Self.shardSize
        return (0..<count).map { i in (i, min(Self.shardSize, inputs - i * Self.shardSize)) }
    }
}

// MARK: - Random numbers

/// Core's SplitMix64 generator, seeded as the fuzzer always did (the seed is the state), so a recorded seed replays.
struct FuzzRNG {
    private var generator: SeededRandom

    init(seed: UInt64) { generator = SeededRandom(state: seed) }

    mutating func next() -> UInt64 { generator.next() }

    /// 0..<n for n > 0 (the modulo bias does not matter here).
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func range(_ r: ClosedRange<Int>) -> Int { r.lowerBound + below(r.upperBound - r.lowerBound + 1) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
    /// Uniform in [0, 1).
    mutating func unit() -> Double { generator.unit() }

    static func derive(_ seed: UInt64, _ n: Int) -> UInt64 {
        var r = FuzzRNG(seed: seed ^ (UInt64(truncatingIfNeeded: n) &* 0xD1B5_4A32_D192_ED03))
        _ = r.next()
        return r.next()
    }
}

// MARK: - Corpus

/// The real captures, split into lines (newline kept), by what reads them.
struct FuzzCorpus: Sendable {
    var xctestOut: [[[UInt8]]] = []
    var xctestErr: [[[UInt8]]] = []
    var testingOut: [[[UInt8]]] = []
    var testingErr: [[[UInt8]]] = []
    var listings: [[[UInt8]]] = []
    var dumpJSON: [UInt8] = []
    var xctestSuites: [SuiteID] = []
    var all: [[[UInt8]]] = []
    /// The xcodebuild runner's fixtures (FuzzXcodebuild.swift).
    var xcodebuild = XcodebuildCorpus()

    static func load() throws -> FuzzCorpus {
        var c = FuzzCorpus()
        let names = try FileManager.default.contentsOfDirectory(atPath: Captures.folder.path).sorted()
        for name in names where name != "README.md" {
            let lines = Self.lines(try Captures.bytes(name))
            if name == "dump-tests.json" {
                c.dumpJSON = try Captures.bytes(name)
            } else if name.hasSuffix(".txt") {
                c.listings.append(lines)
            } else if name.hasSuffix(".jsonl") {
                c.testingOut.append(lines)
            } else if name.hasPrefix("swift-testing"), name.hasSuffix(".stderr") {
                c.testingErr.append(lines)
            } else if name.hasSuffix(".stderr") {
                c.xctestErr.append(lines)
            } else if name.hasSuffix(".stdout") {
                c.xctestOut.append(lines)
            }
            c.all.append(lines)
        }
        c.xctestSuites = try XCTestRunner().parseListing(String(decoding: c.dumpJSON, as: UTF8.self)).map(\.id)
        guard !c.xctestOut.isEmpty, !c.xctestErr.isEmpty, !c.testingOut.isEmpty, !c.listings.isEmpty,
              !c.xctestSuites.isEmpty else {
            throw FuzzCorpusError()
        }
        c.xcodebuild = try XcodebuildCorpus.load()
        // Their console lines are mutations' material too ("a line from another capture").
        c.all += c.xcodebuild.logs
        return c
    }

    static func lines(_ bytes: [UInt8]) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var start = 0
        for (i, b) in bytes.enumerated() where b == UInt8(ascii: "\n") {
            out.append(Array(bytes[start...i]))
            start = i + 1
        }
        if start < bytes.count { out.append(Array(bytes[start...])) }
        return out
    }
}

struct FuzzCorpusError: Error, CustomStringConvertible {
    var description: String { "Tests/Fixtures/Captured is missing captures the fuzzer mutates" }
}

// MARK: - Inputs and results

struct FuzzInput {
    enum Target {
        /// XCTest console output of a unit of these classes.
        case xctest([SuiteID])
        /// XCTest console output of a unit of every class the captures name.
        case xctestCaptures
        case swiftTesting
        /// xcodebuild's console and result bundle, read for a unit of `tests` tests.
        case xcodebuild(XcodebuildOutputParser, tests: Int)
    }

    var target: Target
    var stdout: [UInt8]
    var stderr: [UInt8] = []
    /// The exact events of a well-formed stream.
    var expected: [TestEvent]?
}

/// The fuzzer's exact oracles: inputs whose whole result is known, checked for equality rather than for invariants.
/// Each must run at least `minimumPerMillion` times per million inputs, or a change to a generator (a flag that is
/// never true, a kind that is never drawn) would leave a check that never runs and a fuzzer that still passes.
enum FuzzOracle: Int, CaseIterable, Sendable {
    case xctestStream, testingStream, xcodebuildStream, lineBuffer, resultBundle, testList, relocatedTestRun

    /// The oracle of a well-formed stream for this parser.
    init(_ target: FuzzInput.Target) {
        switch target {
        case .xctest, .xctestCaptures: self = .xctestStream
        case .swiftTesting: self = .testingStream
        case .xcodebuild: self = .xcodebuildStream
        }
    }

    /// The kind of input that carries it.
    var kind: FuzzShard.Kind {
        switch self {
        case .xctestStream: .xctestStream
        case .testingStream: .testingStream
        case .xcodebuildStream: .xcodebuildStream
        case .lineBuffer: .lineBuffer
        case .resultBundle: .xcresult
        case .testList, .relocatedTestRun: .xcodeListing
        }
    }

    /// About a third of how often the kinds' shares and the generators' choices make it come up (seen with the
    /// default seed: xctest 3,514, testing 2,555, xcodebuild 589, line buffer 66,876, bundles 773, lists 113,
    /// .xctestrun 92): far below any seed's count, far above zero.
    var minimumPerMillion: Int {
        switch self {
        case .xctestStream: 1_200
        case .testingStream: 800
        case .xcodebuildStream: 200
        case .lineBuffer: 20_000
        case .resultBundle: 250
        case .testList: 40
        case .relocatedTestRun: 25
        }
    }

    var name: String { String(describing: self) }
}

struct FuzzShardResult: Sendable {
    var shard: Int
    var inputs = 0
    var lines = 0
    var events = 0
    /// Inputs checked against an exact oracle, by `FuzzOracle` position: a run in which one never ran proves nothing
    /// of what it checks.
    var oracleRuns = [Int](repeating: 0, count: FuzzOracle.allCases.count)
    var oracleChecks: Int { oracleRuns.reduce(0, +) }
    var chunkChecks = 0
    var listings = 0
    var listingsThrown = 0
    /// `xcresulttool get test-results tests` JSON texts read, and those rejected.
    var bundles = 0
    var bundlesThrown = 0
    /// Inputs and seconds of each kind, by `Kind.allCases` position (no hashing per input).
    var byKind = [Int](repeating: 0, count: FuzzShard.Kind.allCases.count)
    var secondsByKind = [Double](repeating: 0, count: FuzzShard.Kind.allCases.count)
    /// Seconds inside the parsers (first parse of each input), the rest is making and checking inputs.
    var parseSeconds = 0.0
    var generateSeconds = 0.0
    var failures: [(shard: Int, text: String)] = []
    /// Every failure, counted by its kind and its message without numbers: one line per distinct problem.
    var signatures: [String: Int] = [:]
    var slowest = 0.0
    var slowestInput = ""

    mutating func ran(_ oracle: FuzzOracle) { oracleRuns[oracle.rawValue] += 1 }

    var oracleSummary: String {
        FuzzOracle.allCases.map { "\($0.name) \(oracleRuns[$0.rawValue])" }.joined(separator: ", ")
    }

    mutating func add(_ other: FuzzShardResult) {
        inputs += other.inputs
        lines += other.lines
        events += other.events
        for i in oracleRuns.indices { oracleRuns[i] += other.oracleRuns[i] }
        chunkChecks += other.chunkChecks
        listings += other.listings
        listingsThrown += other.listingsThrown
        bundles += other.bundles
        bundlesThrown += other.bundlesThrown
        for i in byKind.indices {
            byKind[i] += other.byKind[i]
            secondsByKind[i] += other.secondsByKind[i]
        }
        parseSeconds += other.parseSeconds
        generateSeconds += other.generateSeconds
        failures += other.failures
        signatures.merge(other.signatures, uniquingKeysWith: +)
        if other.slowest > slowest {
            slowest = other.slowest
            slowestInput = other.slowestInput
        }
    }
}

// MARK: - The fuzzer

struct FuzzShard {
    var rng: FuzzRNG
    let corpus: FuzzCorpus
    var result: FuzzShardResult
    private var current = 0

    var trace: String?

    /// A fresh parser for the captures' classes, copied for each input (making one per input would cost more than
    /// parsing a small input).
    let captureParser: XCTestOutputParser
    /// The same for the xcodebuild captures: a unit of every test they name.
    let xcodebuildCaptureParser: XcodebuildOutputParser

    init(index: Int, seed: UInt64, corpus: FuzzCorpus) {
        rng = FuzzRNG(seed: FuzzRNG.derive(seed, index))
        self.corpus = corpus
        captureParser = XCTestOutputParser(suites: corpus.xctestSuites)
        xcodebuildCaptureParser = XcodebuildOutputParser(unit: corpus.xcodebuild.unit)
        result = FuzzShardResult(shard: index)
    }

    enum Kind: String, Sendable, CaseIterable {
        case randomBytes = "random-bytes", lineBuffer = "line-buffer", mutatedLine = "mutated-line"
        case xctestFragment = "xctest-fragment", testingRecords = "testing-records", mutatedCapture = "mutated-capture"
        case xctestStream = "xctest-stream", testingStream = "testing-stream", listing
        case xcodebuildLine = "xcodebuild-line", xcodebuildCapture = "xcodebuild-capture"
        case xcodebuildStream = "xcodebuild-stream", xcresult, xcodeListing = "xcode-listing"

        var index: Int {
            switch self {
            case .randomBytes: 0
            case .lineBuffer: 1
            case .mutatedLine: 2
            case .xctestFragment: 3
            case .testingRecords: 4
            case .mutatedCapture: 5
            case .xctestStream: 6
            case .testingStream: 7
            case .listing: 8
            case .xcodebuildLine: 9
            case .xcodebuildCapture: 10
            case .xcodebuildStream: 11
            case .xcresult: 12
            case .xcodeListing: 13
            }
        }
    }

    /// How often each kind comes up, per ten thousand. A line costs ~10 µs (console) to ~25 µs (JSON) to parse in
    /// a debug build, so most inputs are a single line; the streams (3 in 100) carry the exact-event oracles. The
    /// xcodebuild kinds (a unit's output with its bundle costs ~1 ms) took their time from the others, so that the
    /// run stays as long as it was.
    static func kind(_ roll: Int) -> Kind {
        switch roll {
        case 0..<3_976: .randomBytes
        case 3_976..<6_826: .mutatedLine
        case 6_826..<8_546: .xctestFragment
        case 8_546..<8_781: .testingRecords
        case 8_781..<9_451: .lineBuffer
        case 9_451..<9_671: .xcodebuildLine
        case 9_671..<9_771: .mutatedCapture
        case 9_771..<9_783: .xcodebuildCapture
        case 9_783..<9_853: .xctestStream
        case 9_853..<9_865: .xcodebuildStream
        case 9_865..<9_915: .testingStream
        case 9_915..<9_940: .xcresult
        case 9_940..<9_950: .xcodeListing
        default: .listing
        }
    }

    mutating func generate(_ kind: Kind) -> FuzzInput {
        switch kind {
        case .randomBytes: randomBytesInput()
        case .mutatedLine: mutatedLineInput()
        case .xctestFragment: xctestFragment()
        case .testingRecords: damagedTestingStream(maxLines: 3)
        case .mutatedCapture: mutatedCaptureInput()
        case .xctestStream: xctestStream(wellFormed: rng.chance(50))
        case .testingStream: rng.chance(50) ? wellFormedTestingStream() : damagedTestingStream(maxLines: 8)
        case .xcodebuildLine: xcodebuildLineInput()
        case .xcodebuildCapture: xcodebuildCaptureInput()
        case .xcodebuildStream: xcodebuildStream(wellFormed: rng.chance(50))
        case .lineBuffer, .listing, .xcresult, .xcodeListing: FuzzInput(target: .swiftTesting, stdout: [])
        }
    }

    /// Monotonic seconds: no system call (vDSO), cheap enough to read once per input.
    static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    mutating func run(_ count: Int, only: Kind? = nil) {
        defer {
            if let trace {
                for ext in ["stdout", "stderr"] { try? FileManager.default.removeItem(atPath: "\(trace)/shard-\(result.shard).\(ext)") }
            }
        }
        for n in 0..<count {
            current = n
            let started = Self.now()
            // Mostly single lines so a million inputs stay short, with whole streams among them.
            let kind = Self.kind(rng.below(10_000))
            if let only, kind != only { continue }
            switch kind {
            case .lineBuffer: fuzzLineBuffer()
            case .listing: fuzzListing()
            case .xcresult: fuzzResultBundle()
            case .xcodeListing: fuzzXcodeListing()
            default:
                let generating = Self.now()
                let input = generate(kind)
                result.generateSeconds += Self.now() - generating
                check(kind, input)
            }
            result.inputs += 1
            let k = kind.index
            result.byKind[k] += 1
            let seconds = Self.now() - started
            result.secondsByKind[k] += seconds
            if seconds > result.slowest {
                result.slowest = seconds
                result.slowestInput = "shard \(result.shard) input \(n) (\(kind.rawValue))"
            }
        }
    }

    mutating func fail(_ kind: Kind, _ what: String, _ input: FuzzInput?) {
        let head = what.prefix { $0 != "\n" && $0 != ":" }.filter { !$0.isNumber }
        result.signatures["\(kind.rawValue): \(head)", default: 0] += 1
        guard result.failures.count < 5 else { return }
        var text = "shard \(result.shard) input \(current) [\(kind.rawValue)]: \(what)"
        if let input {
            text += "\n  stdout (\(input.stdout.count) bytes): \(Self.escape(input.stdout))"
            if !input.stderr.isEmpty { text += "\n  stderr (\(input.stderr.count) bytes): \(Self.escape(input.stderr))" }
        }
        result.failures.append((result.shard, text))
    }

    static func escape(_ bytes: [UInt8], limit: Int = 700) -> String {
        var s = ""
        for b in bytes.prefix(limit) {
            switch b {
            case UInt8(ascii: "\n"): s += "\\n"
            case UInt8(ascii: "\\"): s += "\\\\"
            case 0x20..<0x7F: s.append(Character(Unicode.Scalar(b)))
            default: s += "\\x" + String(b, radix: 16).leftPadded(2)
            }
        }
        return bytes.count > limit ? s + "…" : s
    }

    // MARK: Running and checking

    /// Feeds one input through its parser and checks every invariant; a sample is parsed twice with different
    /// chunks and must give the same events.
    mutating func check(_ kind: Kind, _ input: FuzzInput) {
        let invariance = rng.chance(input.expected != nil ? 25 : 6)
        let interleave = !invariance && rng.chance(30)
        let parseStart = Self.now()
        let events = parse(input, interleave: interleave)
        result.parseSeconds += Self.now() - parseStart
        let lines = Self.lineCount(input.stdout) + Self.lineCount(input.stderr)
        result.lines += lines
        result.events += events.count
        if let problem = Self.violation(events, input, lines: lines) { fail(kind, problem + "\n  events: \(events)", input) }
        if let expected = input.expected {
            result.ran(FuzzOracle(input.target))
            if let problem = Self.endedBeforeStarted(events, input) { fail(kind, problem + "\n  events: \(events)", input) }
            if !Self.same(events, expected) {
                fail(kind, "well-formed stream gave other events than expected\n  got:      \(events)\n  expected: \(expected)", input)
            }
        }
        // Two more parses: for half the damaged streams and captures (a well-formed one has its exact events).
        if case .xcodebuild = input.target, kind != .xcodebuildLine, input.expected == nil, rng.chance(50) {
            checkReconciliation(kind, input)
        }
        if invariance {
            result.chunkChecks += 1
            let again = parse(input, interleave: false)
            if !Self.same(events, again) {
                fail(kind, "chunking changed the events\n  first:  \(events)\n  second: \(again)", input)
            }
        }
    }

    func traceInput(_ stdout: [UInt8], _ stderr: [UInt8] = []) {
        guard let trace else { return }
        _ = FileManager.default.createFile(atPath: "\(trace)/shard-\(result.shard).stdout", contents: Data(stdout))
        _ = FileManager.default.createFile(atPath: "\(trace)/shard-\(result.shard).stderr", contents: Data(stderr))
    }

    mutating func parse(_ input: FuzzInput, interleave: Bool) -> [TestEvent] {
        traceInput(input.stdout, input.stderr)
        return switch input.target {
        case .xctest(let suites): drive(XCTestOutputParser(suites: suites), input, interleave: interleave)
        case .xctestCaptures: drive(captureParser, input, interleave: interleave)
        case .swiftTesting: drive(SwiftTestingEventParser(), input, interleave: interleave)
        case .xcodebuild(let parser, _): drive(parser, input, interleave: interleave)
        }
    }

    /// stdout and stderr in random chunks (1 byte .. everything), either stdout first or interleaved, then finish().
    mutating func drive<P: OutputParser>(_ parser: P, _ input: FuzzInput, interleave: Bool) -> [TestEvent] {
        var p = parser
        var events: [TestEvent] = []
        var out = ChunkPlan(count: input.stdout.count, rng: &rng)
        var err = ChunkPlan(count: input.stderr.count, rng: &rng)
        while !out.done || !err.done {
            let useErr = out.done || (interleave && !err.done && rng.chance(40))
            let new = useErr ? p.consume(stderr: Self.piece(input.stderr, err.next(&rng)))
                : p.consume(stdout: Self.piece(input.stdout, out.next(&rng)))
            if !new.isEmpty { events += new }
        }
        if rng.chance(3) { events += p.consume(stdout: []) }
        let last = p.finish()
        return last.isEmpty ? events : events + last
    }

    /// The bytes of one chunk (the whole array needs no copy).
    static func piece(_ bytes: [UInt8], _ r: Range<Int>) -> [UInt8] {
        if r.count == bytes.count { return bytes }
        return bytes.withUnsafeBufferPointer { Array(UnsafeBufferPointer(rebasing: $0[r])) }
    }

    /// Events compared as values, or as text when a NaN (a measurement may carry one) makes == false.
    static func same(_ a: [TestEvent], _ b: [TestEvent]) -> Bool {
        a == b || String(reflecting: a) == String(reflecting: b)
    }

    static func lineCount(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBufferPointer { buffer in
            var n = 0
            var i = 0
            while i < buffer.count {
                if buffer[i] == 0x0A { n += 1 }
                i += 1
            }
            if i > 0, buffer[i - 1] != 0x0A { n += 1 }
            return n
        }
    }

    /// In a well-formed stream a test ends only after it started, except a Swift Testing test that is skipped
    /// (disabled tests get `testSkipped` alone). On other input the parsers report an end they read even without its
    /// start (the collector counts such a test as started), so this holds for well-formed streams only.
    static func endedBeforeStarted(_ events: [TestEvent], _ input: FuzzInput) -> String? {
        // Parallel-testing clones print no start: xcodebuild's streams have an order of their own.
        if case .xcodebuild = input.target { return xcodebuildOrderViolation(events) }
        var started: Set<TestID> = []
        for event in events {
            switch event {
            case .started(let id): started.insert(id)
            case .ended(let id, let status, _, _):
                if case .swiftTesting = input.target, status == .skipped { continue }
                if !started.contains(id) { return "\(id) ended (\(status)) without having started" }
            default: break
            }
        }
        return nil
    }

    /// What every parser promises for any input.
    static func violation(_ events: [TestEvent], _ input: FuzzInput, lines: Int) -> String? {
        // Each event comes from its own line (an issue from its `error:` line, a trap from its stderr line); a result
        // bundle may add a start, issues and an end for each of the unit's tests, each issue a node of 30 bytes or more.
        var allowed = lines
        if case .xcodebuild(_, let tests) = input.target { allowed += 2 * tests + input.stdout.count / 30 }
        if events.count > allowed { return "\(events.count) events from \(lines) lines" }
        var text = 0
        func bad(_ id: TestID) -> String? {
            if id.name.isEmpty { return "a test id with an empty name: \(id)" }
            if id.suite.name.isEmpty { return "a test id with an empty suite: \(id)" }
            return nil
        }
        func badTime(_ d: Double) -> Bool { !d.isFinite || d < 0 }
        func badPlace(_ l: FanoutCore.SourceLocation?) -> Bool { l.map { $0.file.isEmpty || $0.line < 1 } ?? false }
        for event in events {
            switch event {
            case .started(let id):
                if let b = bad(id) { return b }
                text += id.suite.module.utf8.count + id.suite.name.utf8.count + id.name.utf8.count
            case .issue(let id, let issue):
                if let b = bad(id) { return b }
                // Swift Testing says "issue recorded" for an issue without text; XCTest's message is passed verbatim.
                if issue.message.isEmpty, case .swiftTesting = input.target { return "an issue without a message" }
                if badPlace(issue.location) { return "an issue at no real place: \(String(describing: issue.location))" }
                text += issue.message.utf8.count + (issue.location?.file.utf8.count ?? 0) + id.name.utf8.count
            case .ended(let id, let status, let duration, let reason):
                if let b = bad(id) { return b }
                if badTime(duration) { return "test duration \(duration)" }
                if status != .skipped, reason != nil { return "a \(status) test with a skip reason" }
                text += id.name.utf8.count + (reason?.utf8.count ?? 0)
            case .measured(let m):
                if let b = bad(m.test) { return b }
                if badPlace(m.location) { return "a measurement at no real place" }
                text += m.metric.utf8.count + m.unit.utf8.count + m.identifier.utf8.count + m.test.name.utf8.count
                    + (m.location?.file.utf8.count ?? 0) + m.values.count * 8
            case .suiteEnded(let suite, let duration):
                if suite.name.isEmpty { return "a suite with an empty name" }
                if badTime(duration) { return "suite duration \(duration)" }
            }
        }
        // Every string comes out of the input (an invalid byte may grow to a 3-byte U+FFFD; a few fields of a line
        // may overlap): more than that is amplification.
        let bytes = input.stdout.count + input.stderr.count
        if text > 3 * 6 * bytes + 128 * events.count { return "\(text) bytes of text in events from \(bytes) input bytes" }
        return nil
    }

    // MARK: (a) random bytes

    mutating func randomBytesInput() -> FuzzInput {
        let length = rng.chance(97) ? rng.range(0...48) : rng.range(48...2048)
        // Invalid UTF-8 in a tenth: the test host captures a backtrace for every error thrown, and repairing
        // invalid UTF-8 throws one inside the standard library, so it costs far more here than in Fanout.
        let alphabet: [UInt8]? = switch rng.below(20) {
        case 0: nil // any byte
        case 1..<8: Self.consoleBytes
        case 8..<14: Self.jsonBytes
        case 14..<19: Self.punctuationBytes
        default: Self.punctuationBytes + [0xFF, 0xC3, 0xE2, 0x80]
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length)
        if let alphabet {
            for _ in 0..<length { bytes.append(alphabet[rng.below(alphabet.count)]) }
        } else {
            for _ in 0..<length { bytes.append(rng.byte()) }
        }
        if rng.chance(15) { bytes.insert(0x0A, at: rng.below(bytes.count + 1)) }
        var stderr: [UInt8] = []
        if rng.chance(10) { for _ in 0..<rng.range(0...64) { stderr.append(rng.byte()) } }
        return FuzzInput(target: rng.chance(50) ? .xctestCaptures : .swiftTesting, stdout: bytes, stderr: stderr)
    }

    static let consoleBytes = Array("Test Case 'Suite.m' started passed failed skipped (0.1 seconds):.'".utf8)
    static let jsonBytes = Array("{}[]\":,\\/0123456789.e-+ntrufalsekindpayloadtestIDevent".utf8)
    static let punctuationBytes = Array(":'\"(){}[]., \t\r\n\0".utf8)

    // MARK: (b) mutated captures

    mutating func window(_ files: [[[UInt8]]], maxLines: Int, wholeFile: Int = 0) -> [UInt8] {
        let file = rng.pick(files)
        if file.isEmpty { return [] }
        let whole = rng.chance(wholeFile)
        let start = whole ? 0 : rng.below(file.count)
        let end = whole ? file.count : min(file.count, start + rng.range(1...maxLines))
        var out: [UInt8] = []
        for line in file[start..<end] { out += line }
        return out
    }

    /// One line of a real capture, mutated.
    mutating func mutatedLineInput() -> FuzzInput {
        var input: FuzzInput
        switch rng.below(20) {
        case 0..<14: input = FuzzInput(target: .xctestCaptures, stdout: window(corpus.xctestOut, maxLines: 1))
        case 14..<15: input = FuzzInput(target: .xctestCaptures, stdout: [], stderr: window(corpus.xctestErr, maxLines: 1))
        case 15..<18: input = FuzzInput(target: .swiftTesting, stdout: window(corpus.testingOut, maxLines: 1))
        default: input = FuzzInput(target: rng.chance(50) ? .xctestCaptures : .swiftTesting, stdout: window(corpus.all, maxLines: 1))
        }
        if input.stdout.isEmpty { mutate(&input.stderr, times: rng.range(1...3)) } else { mutate(&input.stdout, times: rng.range(1...3)) }
        return input
    }

    mutating func mutatedCaptureInput() -> FuzzInput {
        var input: FuzzInput
        switch rng.below(10) {
        case 0..<4:
            input = FuzzInput(target: .xctestCaptures, stdout: window(corpus.xctestOut, maxLines: 6, wholeFile: 10))
            if rng.chance(25) { input.stderr = window(corpus.xctestErr, maxLines: 4) }
        case 4..<8:
            input = FuzzInput(target: .swiftTesting, stdout: window(corpus.testingOut, maxLines: 4, wholeFile: 3))
            if rng.chance(10) { input.stderr = window(corpus.testingErr, maxLines: 4) }
        default:
            // The other framework's output, or any capture at all.
            input = FuzzInput(target: rng.chance(50) ? .xctestCaptures : .swiftTesting,
                              stdout: window(corpus.all, maxLines: 5))
            if rng.chance(30) { input.stderr = window(corpus.all, maxLines: 4) }
        }
        mutate(&input.stdout, times: rng.range(1...4))
        if !input.stderr.isEmpty, rng.chance(50) { mutate(&input.stderr, times: rng.range(1...2)) }
        return input
    }

    static let tokens: [[UInt8]] = [
        "'", "\"", ":", "(", ")", "{", "}", "[", "]", ",", "\\", ".", "/", " ", "\t", ": ", " : ", "' ", "''",
        "Test Case '", "Test Suite '", "' started at ", "' passed (", "' failed (", "' skipped (", " seconds)",
        "\t Executed ", " in ", ": error: ", " : Test skipped", " - ", ": Test Case '", "' measured [",
        "values: [", "average: ", "Fatal error: ", ": Precondition failed: ", "<EXPR>:0", ".swift:",
        "{\"kind\":\"event\",\"payload\":", "\"testID\":", "\"kind\":", "\"payload\":", "\"instant\":",
        "\"absolute\":", "\"issue\":", "\"messages\":", "\"testEnded\"", "\"testStarted\"", "\"suite\"",
        "null", "true", "false", "[]", "{}", "\\u0000", "\\ud800", "\\\"", "\"\"",
        "\r\n", "\r", "\0", "\n", "\n\n", "\u{301}", "\u{200D}", "\u{FEFF}", "\u{1F600}", "\u{2028}", "\u{FFFD}",
        "\u{0130}", "ß", "ﬁ", "e\u{301}",
    ].map { Array($0.utf8) } + [[0xFF], [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xED, 0xA0, 0x80], [0xC0, 0x80],
                                 [0xF4, 0x90, 0x80, 0x80], [0x80], [0xFE, 0xFF]]

    static let specialNumbers: [[UInt8]] = [
        "nan", "NaN", "-nan", "inf", "-inf", "infinity", "+inf", "1e999", "-1e999", "1.7976931348623157e308",
        "-1.7976931348623157e308", "4.9e-324", "1e-400", "-0", "-0.0", "-1", "-0.001", "9223372036854775807",
        "9223372036854775808", "-9223372036854775809", "18446744073709551616", "99999999999999999999999999999999",
        "0x1p1023", "0x1.fffffffffffffp1023", "1_000", "١٢", "", " ", "1e", ".", "0.", ".5", "+1", "01",
        "00000000000000000000.1", "1" + String(repeating: "0", count: 400),
    ].map { Array($0.utf8) }

    static func lineRanges(_ bytes: [UInt8]) -> [Range<Int>] {
        bytes.withUnsafeBufferPointer { buffer in
            var out: [Range<Int>] = []
            var start = 0
            var i = 0
            while i < buffer.count {
                if buffer[i] == 0x0A {
                    out.append(start..<(i + 1))
                    start = i + 1
                }
                i += 1
            }
            if start < buffer.count { out.append(start..<buffer.count) }
            return out
        }
    }

    /// `limit`: the longest result (a plist of the corpus is longer than a console capture's window).
    mutating func mutate(_ b: inout [UInt8], times: Int, limit: Int = 8192) {
        for _ in 0..<times {
            switch rng.below(16) {
            case 0 where !b.isEmpty: // bit flip
                let i = rng.below(b.count)
                b[i] ^= 1 << UInt8(rng.below(8))
            case 1: // random bytes in
                let bytes = (0..<rng.range(1...4)).map { _ in rng.byte() }
                b.insert(contentsOf: bytes, at: rng.below(b.count + 1))
            case 2 where !b.isEmpty: // a range out
                let i = rng.below(b.count)
                b.removeSubrange(i..<min(b.count, i + rng.range(1...24)))
            case 3 where !b.isEmpty: // truncated
                b.removeSubrange(rng.below(b.count)...)
            case 4: // a line twice
                let lines = Self.lineRanges(b)
                if let line = lines.isEmpty ? nil : rng.pick(lines), let to = rng.pick(lines + [b.count..<b.count]).first {
                    b.insert(contentsOf: b[line], at: min(to, b.count))
                }
            case 5, 6: // a line from another capture
                let file = rng.pick(corpus.all)
                if !file.isEmpty {
                    let line = rng.pick(file)
                    let starts = Self.lineRanges(b).map(\.lowerBound) + [b.count]
                    b.insert(contentsOf: line, at: rng.pick(starts))
                }
            case 7, 8, 9: // a token anywhere
                b.insert(contentsOf: rng.pick(Self.tokens), at: rng.below(b.count + 1))
            case 10, 11: // a number replaced by a strange one
                replaceNumber(&b)
            case 12: // two lines swapped
                let lines = Self.lineRanges(b)
                if lines.count >= 2 {
                    let x = rng.pick(lines), y = rng.pick(lines)
                    if x.upperBound <= y.lowerBound {
                        let first = Array(b[x]), second = Array(b[y])
                        b.replaceSubrange(y, with: first)
                        b.replaceSubrange(x, with: second)
                    }
                }
            case 13 where !b.isEmpty: // a stretch repeated
                let i = rng.below(b.count)
                let piece = Array(b[i..<min(b.count, i + rng.range(1...64))])
                for _ in 0..<rng.range(1...8) { b.insert(contentsOf: piece, at: i) }
            case 14: // CRLF line ends
                var out: [UInt8] = []
                out.reserveCapacity(b.count + 64)
                for x in b {
                    if x == UInt8(ascii: "\n") { out.append(UInt8(ascii: "\r")) }
                    out.append(x)
                }
                b = out
            default: // a line cut short, so it ends in the middle of a pattern
                let lines = Self.lineRanges(b)
                if !lines.isEmpty {
                    let line = rng.pick(lines)
                    let cut = line.lowerBound + rng.below(line.count)
                    b.removeSubrange(cut..<(line.upperBound - (b[line.upperBound - 1] == UInt8(ascii: "\n") ? 1 : 0)))
                }
            }
        }
        if b.count > limit { b.removeSubrange(limit...) }
    }

    mutating func replaceNumber(_ b: inout [UInt8]) {
        guard !b.isEmpty else { return }
        func isDigit(_ x: UInt8) -> Bool { x >= UInt8(ascii: "0") && x <= UInt8(ascii: "9") }
        var i = rng.below(b.count)
        while i < b.count, !isDigit(b[i]) { i += 1 }
        guard i < b.count else { return }
        var j = i
        while j < b.count, isDigit(b[j]) || b[j] == UInt8(ascii: ".") { j += 1 }
        b.replaceSubrange(i..<j, with: rng.pick(Self.specialNumbers))
    }

    // MARK: (c) XCTest streams

    static let identifierStart = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_".utf8)
    static let identifierRest = identifierStart + Array("0123456789".utf8)
    static let proseBytes = Array("abcdefghijklmnopqrstuvwxyz ABC0123456789()\"=,-_<>.".utf8)
    static let unicodeLetters = ["é", "Ω", "日", "ß", "ǅ", "→"]

    /// Built from bytes: in a debug build, appending Characters costs more than parsing the line.
    mutating func identifier(_ maxLength: Int = 10) -> String {
        var b: [UInt8] = [Self.identifierStart[rng.below(Self.identifierStart.count)]]
        for _ in 0..<rng.range(0...maxLength) { b.append(Self.identifierRest[rng.below(Self.identifierRest.count)]) }
        let s = String(decoding: b, as: UTF8.self)
        return rng.chance(5) ? Self.unicodeLetters[rng.below(5)] + s : s
    }

    /// Text that no parser rule matches (no colon, no apostrophe; it starts with `x`, never like a console line),
    /// never empty, no outer spaces.
    mutating func prose(_ maxLength: Int = 30) -> String {
        var b: [UInt8] = [UInt8(ascii: "x")]
        for _ in 0..<rng.range(0...maxLength) { b.append(Self.proseBytes[rng.below(Self.proseBytes.count)]) }
        while b.last == UInt8(ascii: " ") { b.removeLast() }
        let s = String(decoding: b, as: UTF8.self)
        return rng.chance(5) ? s + Self.unicodeLetters[rng.below(Self.unicodeLetters.count)] : s
    }

    mutating func decimal(maxWhole: Int = 100) -> String {
        let whole = rng.below(maxWhole)
        let digits = rng.range(0...6)
        if digits == 0 { return String(whole) }
        var frac = ""
        for _ in 0..<digits { frac.append(String(rng.below(10))) }
        return "\(whole).\(frac)"
    }

    static let timestamps = (0..<64).map { i in "2026-11-21 23:\(10 + i % 50):0\(i % 10).\(100 + i * 13)" }

    mutating func timestamp() -> String {
        Self.timestamps[rng.below(Self.timestamps.count)]
    }

    /// One to three console lines from templates: random class and method names (some without a dot, empty or
    /// nested), random or strange numbers, pieces left out; a trap on stderr.
    mutating func xctestFragment() -> FuzzInput {
        let cls = rng.chance(10) ? rng.pick(["", ".", "A.", ".b", "A..b", "A.b.c", "'", "C' "]) : identifier(6)
        let method = rng.chance(10) ? rng.pick(["", ".", "test.", "é", "' passed (", " : "]) : "test" + identifier(6)
        let name = rng.chance(8) ? rng.pick([cls, method, cls + method, "\(cls)..\(method)"]) : "\(cls).\(method)"
        let number = rng.chance(25) ? String(decoding: rng.pick(Self.specialNumbers), as: UTF8.self) : decimal()
        var lines: [String] = []
        var stderr: [UInt8] = []
        if rng.chance(25) { lines.append("Test Case '\(name)' started at \(timestamp())") }
        // A measurement line holds a dozen fields (the most expensive line to parse): one in twelve.
        switch rng.below(12) {
        case 0:
            let status = rng.pick(["passed", "failed", "skipped", "started", "measured", "", "passed"])
            lines.append("Test Case '\(name)' \(status) (\(number) seconds)")
        case 1:
            lines.append("Test Suite '\(cls)' \(rng.pick(["passed", "failed", "started"])) at \(timestamp())")
            let total = rng.chance(50) ? number : decimal()
            lines.append("\t Executed \(rng.below(5)) tests, with 0 failures (0 unexpected) in \(number) (\(total)) seconds")
        case 2:
            lines.append("/p/\(cls).swift:\(number): error: \(name) : \(prose())")
            if rng.chance(30) { lines.append(prose()) }
        case 3:
            lines.append("/p/\(cls).swift:\(number): \(name) : Test skipped\(rng.pick(["", " - ", ": ", ": x - ", " -"]))\(prose())")
        case 4:
            let values = (0..<rng.range(0...4)).map { _ in rng.chance(20) ? number : decimal() }.joined(separator: rng.pick([", ", ",", " "]))
            lines.append("""
                /p/F.swift:\(number): Test Case '\(name)' measured [\(rng.pick(["Time, seconds", "", ",", "Time"]))] average: \(number), \
                relative standard deviation: \(number)%, values: [\(values)], performanceMetricID:\(identifier()), \
                maxPercentRelativeStandardDeviation: \(number)%, maxStandardDeviation: \(number)
                """)
        case 5:
            stderr = Array("\(cls)/\(cls).swift:\(number): \(rng.pick(["Fatal error", "Precondition failed", "Assertion failed"])): \(prose())\n".utf8)
        case 6:
            lines.append("<EXPR>:\(number): error: \(name) : threw error \"\(prose())\"")
        case 7, 8, 9:
            let status = rng.pick(["passed", "failed", "skipped", "passed"])
            lines.append("Test Case '\(name)' \(status) (\(number) seconds)")
        default:
            lines.append(prose())
        }
        if rng.chance(20) { lines.append("Test Case '\(name)' \(rng.pick(["passed", "failed", "skipped"])) (\(number) seconds)") }
        var stdout = Array(lines.joined(separator: "\n").utf8)
        if rng.chance(80) { stdout.append(0x0A) }
        if rng.chance(20) { mutate(&stdout, times: 1) }
        // A unit's classes come from a listing, which never holds a nameless class.
        return FuzzInput(target: .xctest(cls.isEmpty ? [] : [SuiteID(module: "M", name: cls)]), stdout: stdout, stderr: stderr)
    }

    /// A console stream of a unit of classes: well-formed ones with the exact events they must give, damaged ones
    /// (lines lost, doubled, cut, numbers made strange, a crash on stderr) for the invariants only.
    mutating func xctestStream(wellFormed: Bool) -> FuzzInput {
        let module = identifier()
        var lines: [String] = []
        var expected: [TestEvent] = []
        var suites: [SuiteID] = []
        let wrap = rng.chance(50)
        if wrap { lines.append("Test Suite 'Selected tests' started at \(timestamp())") }
        for c in 0..<rng.range(1...2) {
            var cls = identifier() + "Tests\(c)"
            if rng.chance(5) { cls = "Outer\(c).\(cls)" } // nested class: the last dot separates the method
            let suite = SuiteID(module: module, name: cls)
            suites.append(suite)
            lines.append("Test Suite '\(cls)' started at \(timestamp())")
            let count = rng.range(1...3)
            var failures = 0
            for m in 0..<count {
                let method = "test" + identifier() + "\(m)"
                let id = TestID(suite: suite, name: method)
                lines.append("Test Case '\(cls).\(method)' started at \(timestamp())")
                expected.append(.started(id))
                if rng.chance(10) { lines.append(prose()) } // the test's own print()
                var status = TestStatus.passed
                var reason: String?
                switch rng.below(20) {
                case 0..<5:
                    status = .failed
                    for _ in 0..<rng.range(1...2) {
                        let place = FanoutCore.SourceLocation(file: "/work/\(identifier()).swift", line: rng.range(1...9999))
                        let (kind, head): (FanoutCore.Issue.Kind, String) = switch rng.below(4) {
                        case 0: (.assertion, "XCTAssertEqual failed: (\"\(rng.below(9))\") is not equal to (\"\(rng.below(9))\") - ")
                        case 1: (.assertion, "failed - ")
                        case 2: (.expectationTimeout, "Asynchronous wait failed - Exceeded timeout of 0.2 seconds, with unfulfilled expectations ")
                        default: (.assertion, "XCTAssertTrue failed - ")
                        }
                        var message = head + prose()
                        lines.append("\(place.file):\(place.line): error: \(cls).\(method) : \(message)")
                        for _ in 0..<(rng.chance(20) ? rng.range(1...3) : 0) {
                            let more = rng.chance(20) ? "" : prose()
                            lines.append(more)
                            message += "\n" + more
                        }
                        expected.append(.issue(id, FanoutCore.Issue(kind: kind, message: message, location: place)))
                    }
                case 5:
                    status = .failed
                    let message = "threw error \"missingKey(\"\(identifier())\")\""
                    lines.append("<EXPR>:0: error: \(cls).\(method) : \(message)")
                    expected.append(.issue(id, FanoutCore.Issue(kind: .thrown, message: message)))
                case 6..<9:
                    status = .skipped
                    let why = prose()
                    reason = why
                    let form = rng.chance(50) ? " - \(why)" : ": required false value but got true - \(why)"
                    lines.append("/work/\(identifier()).swift:\(rng.range(1...999)): \(cls).\(method) : Test skipped\(form)")
                case 9..<11:
                    let place = FanoutCore.SourceLocation(file: "/work/\(identifier()).swift", line: rng.range(1...9999))
                    let texts = (0..<rng.range(1...10)).map { _ in decimal(maxWhole: 2) }
                    let average = decimal(maxWhole: 2), rsd = decimal(maxWhole: 200)
                    lines.append("""
                        \(place.file):\(place.line): Test Case '\(cls).\(method)' measured [Time, seconds] average: \(average), \
                        relative standard deviation: \(rsd)%, values: [\(texts.joined(separator: ", "))], \
                        performanceMetricID:org.swift.XCTPerformanceMetric_WallClockTime, \
                        maxPercentRelativeStandardDeviation: 10.000%, maxStandardDeviation: 0.100
                        """)
                    expected.append(.measured(FanoutCore.Measurement(
                        test: id, metric: "Time", unit: "seconds", identifier: "org.swift.XCTPerformanceMetric_WallClockTime",
                        values: texts.compactMap { Double($0) }, average: Double(average) ?? -1,
                        relativeStandardDeviation: Double(rsd) ?? -1, maxPercentRelativeStandardDeviation: 10,
                        maxStandardDeviation: 0.1, location: place)))
                default:
                    break
                }
                if status == .failed { failures += 1 }
                let duration = decimal(maxWhole: rng.chance(90) ? 10 : 100_000)
                lines.append("Test Case '\(cls).\(method)' \(status.rawValue) (\(duration) seconds)")
                expected.append(.ended(id, status, duration: Double(duration) ?? -1, reason: reason))
            }
            lines.append("Test Suite '\(cls)' \(failures > 0 ? "failed" : "passed") at \(timestamp())")
            let total = decimal(maxWhole: 1000)
            lines.append("""
                \(rng.chance(90) ? "\t Executed" : " Executed") \(count) test\(count == 1 ? "" : "s"), with \
                \(failures) failure\(failures == 1 ? "" : "s") (0 unexpected) in \(decimal()) (\(total)) seconds
                """)
            expected.append(.suiteEnded(suite, duration: Double(total) ?? -1))
        }
        if wrap {
            lines.append("Test Suite 'Selected tests' passed at \(timestamp())")
            lines.append("\t Executed 1 test, with 0 failures (0 unexpected) in 0.1 (0.1) seconds")
        }
        let newline = rng.chance(15) ? "\r\n" : "\n"
        var text = lines.joined(separator: newline)
        if rng.chance(80) { text += newline }
        var input = FuzzInput(target: .xctest(suites), stdout: Array(text.utf8))
        if wellFormed {
            input.expected = expected
            return input
        }
        damage(&input, lines: lines, newline: newline)
        if rng.chance(30) {
            // A trap while a test runs: its last words go to stderr, maybe with a backtrace.
            let trap = rng.pick(["Fatal error", "Precondition failed", "Assertion failed"])
            input.stderr = Array("\(identifier())/\(identifier()).swift:\(rng.range(0...99)): \(trap): \(prose())\n".utf8)
            if rng.chance(50) { input.stderr += window(corpus.xctestErr, maxLines: 12) }
            if rng.chance(30) { mutate(&input.stderr, times: 1) }
        }
        return input
    }

    /// Lines lost, doubled, cut or swapped; numbers made strange; bytes flipped.
    mutating func damage(_ input: inout FuzzInput, lines: [String], newline: String) {
        var ls = lines
        for _ in 0..<rng.range(1...4) {
            guard !ls.isEmpty else { break }
            let i = rng.below(ls.count)
            switch rng.below(6) {
            case 0: ls.remove(at: i)
            case 1: ls.insert(ls[i], at: rng.below(ls.count + 1))
            case 2: ls[i] = String(ls[i].prefix(rng.below(ls[i].count + 1)))
            case 3: ls.swapAt(i, rng.below(ls.count))
            case 4: ls.insert(String(decoding: rng.pick(rng.pick(corpus.all)), as: UTF8.self), at: i)
            default:
                let piece = rng.pick(["(", "' ", ".", " seconds", " in ", ": "])
                ls[i] = ls[i].replacingOccurrences(of: piece, with: rng.pick(["", "((", "'' ", "..", ")", ":"]))
            }
        }
        input.stdout = Array(ls.joined(separator: newline).utf8)
        if rng.chance(60) { mutate(&input.stdout, times: rng.range(1...3)) }
    }

    // MARK: (c) Swift Testing streams

    mutating func json(_ s: String) -> String {
        // Plain ASCII needs no escaping (the common case, and the cheap one).
        if s.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C && $0 != 0x2F }) { return "\"" + s + "\"" }
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/": out += rng.chance(80) ? "\\/" : "/"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || (scalar.value > 0x7E && rng.chance(20)) {
                    for unit in String(scalar).utf16 { out += "\\u" + String(unit, radix: 16).leftPadded(4) }
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// A JSON object with its keys in random order (the real stream's key order varies too).
    mutating func object(_ fields: [Field]) -> String {
        var present: [String] = []
        for f in fields { if let v = f.value { present.append("\"" + f.key + "\":" + v) } }
        for i in present.indices.reversed() { present.swapAt(i, rng.below(i + 1)) }
        return "{" + present.joined(separator: ",") + "}"
    }

    mutating func number(_ d: Double) -> String { "\(d)" }

    mutating func record(_ payload: String, kind: String) -> String {
        object([Field("kind", json(kind)), Field("payload", payload), Field("version", rng.chance(80) ? "\"6.3.0\"" : "0")])
    }

    mutating func event(_ kind: String, raw: String?, instant: String?, messages: String = "[]",
                                issue: String? = nil) -> String {
        let payload = object([Field("instant", instant), Field("kind", json(kind)), Field("messages", messages), Field("issue", issue),
                              Field("testID", raw.map { json($0) })])
        return record(payload, kind: "event")
    }

    mutating func wellFormedTestingStream() -> FuzzInput {
        let module = identifier()
        var records: [String] = []
        var time = rng.unit() * (rng.chance(50) ? 1000 : 2e9)
        // Per suite: its lines and the events they must give, in order; the tests of a suite interleave.
        var suiteBlocks: [[StreamLine]] = []
        for s in 0..<(rng.chance(25) ? 2 : 1) {
            let topLevel = rng.chance(15)
            let path = topLevel ? [] : (0..<rng.range(1...2)).map { _ in identifier() + "Suite\(s)" }
            let suiteRaw = "\(module).\(path.joined(separator: "/"))"
            if !topLevel {
                let payload = object([Field("id", json(suiteRaw)), Field("kind", "\"suite\""), Field("name", json(path.last ?? ""))])
                records.append(record(payload, kind: "test"))
            }
            var tests: [[StreamLine]] = []
            for t in 0..<rng.range(1...2) {
                let name = identifier() + "\(t)" + rng.pick(["()", "(x:)", "(_:)", "(a:b:)", "(word:expected:)"])
                let location = rng.chance(90) ? "/\(identifier()).swift:\(rng.range(1...999)):\(rng.range(1...99))" : ""
                let raw = (topLevel ? "\(module).\(name)" : "\(suiteRaw)/\(name)") + location
                let suite = topLevel ? SwiftTestingNames.topLevelSuite : path.joined(separator: "/")
                let payload = object([Field("id", json(raw)), Field("kind", "\"function\""), Field("name", json(name)),
                                      Field("isParameterized", rng.chance(50) ? "true" : "false")])
                records.append(record(payload, kind: "test"))
                tests.append(testingTest(raw: raw, id: TestID(module: module, suite: suite, name: name), time: &time))
            }
            var block = Self.interleave(tests, &rng)
            if !topLevel {
                let started = instant(time)
                time += rng.unit()
                let ended = instant(time)
                block.insert(StreamLine(event("testStarted", raw: suiteRaw, instant: started.text), nil), at: 0)
                let duration = zipped(started.value, ended.value).map { max(0, $1 - $0) } ?? 0
                let suite = SuiteID(module: module, name: path.joined(separator: "/"))
                block.append(StreamLine(event("testEnded", raw: suiteRaw, instant: ended.text), .suiteEnded(suite, duration: duration)))
            }
            suiteBlocks.append(block)
        }
        let runStarted = event("runStarted", raw: nil, instant: instant(time).text,
                               messages: "[{\"symbol\":\"default\",\"text\":\"Test run started.\"}]")
        var lines = records + [runStarted]
        var expected: [TestEvent] = []
        for block in suiteBlocks {
            for line in block {
                lines.append(line.text)
                if let event = line.event { expected.append(event) }
            }
        }
        lines.append(event("runEnded", raw: nil, instant: instant(time + 1).text))
        var text = lines.joined(separator: "\n")
        if rng.chance(90) { text += "\n" }
        var input = FuzzInput(target: .swiftTesting, stdout: Array(text.utf8), expected: expected)
        if rng.chance(20) { input.stderr = window(corpus.testingErr, maxLines: 10) }
        return input
    }

    /// `{"absolute":…,"since1970":…}` (sometimes a field or all of it missing) and the time the parser must read.
    mutating func instant(_ t: Double) -> (text: String?, value: Double?) {
        switch rng.below(20) {
        case 0: return (nil, nil)
        case 1: return (object([Field("since1970", number(t))]), t)
        case 2: return ("{}", nil)
        default: return (object([Field("absolute", number(t)), Field("since1970", number(t + 1_795_301_471))]), t)
        }
    }

    mutating func testingTest(raw: String, id: TestID, time: inout Double) -> [StreamLine] {
        var out: [StreamLine] = []
        if rng.chance(10) {
            // A disabled test: testSkipped only.
            let why = prose()
            let (text, reason): (String?, String?) = switch rng.below(3) {
            case 0: ("Test \(id.name) skipped: \"\(why)\"", why)
            case 1: ("Test \(id.name) skipped.", "Test \(id.name) skipped.")
            default: (nil, nil)
            }
            let messages = text.map { "[{\"symbol\":\"skip\",\"text\":\(json($0))}]" } ?? "[]"
            let line = event("testSkipped", raw: raw, instant: instant(time).text, messages: messages)
            out.append(StreamLine(line, .ended(id, .skipped, duration: 0, reason: reason)))
            return out
        }
        let start = instant(time)
        out.append(StreamLine(event("testStarted", raw: raw, instant: start.text), .started(id)))
        var failed = false
        for _ in 0..<(rng.chance(40) ? rng.range(1...2) : 0) {
            time += rng.unit() * 0.01
            let isFailure: Bool? = rng.pick([true, false, nil])
            let isKnown: Bool? = rng.pick([true, false, nil])
            let counts = isFailure ?? !(isKnown ?? false)
            if counts { failed = true }
            let file = rng.chance(80) ? "/work/\(identifier()).swift" : nil
            let fileID = rng.chance(50) ? "\(id.suite.module)/\(identifier()).swift" : nil
            let line = rng.chance(90) ? rng.range(1...999) : nil
            let location = (file ?? fileID).flatMap { f in line.map { FanoutCore.SourceLocation(file: f, line: $0) } }
            let texts = (0..<rng.range(0...3)).map { _ in
                rng.chance(50) ? rng.pick(["Expectation failed: (a → 1) == 2", "Caught error: MyError()", "it threw",
                                           "// comment"]) : prose()
            }
            let message = texts.joined(separator: "\n")
            let kind: FanoutCore.Issue.Kind = message.contains("Caught error") || message.contains("threw") ? .thrown : .assertion
            let sourceLocation = object([Field("filePath", file.map { json($0) }), Field("fileID", fileID.map { json($0) }),
                                         Field("line", line.map(String.init)), Field("column", "5")])
            let issue = object([Field("isFailure", isFailure.map { "\($0)" }), Field("isKnown", isKnown.map { "\($0)" }),
                                Field("sourceLocation", sourceLocation), Field("severity", rng.chance(50) ? "\"error\"" : nil)])
            var messages: [String] = []
            for t in texts { messages.append("{\"symbol\":\"fail\",\"text\":\(json(t))}") }
            let recorded = event("issueRecorded", raw: raw, instant: instant(time).text,
                                 messages: "[" + messages.joined(separator: ",") + "]", issue: issue)
            out.append(StreamLine(recorded, .issue(id, FanoutCore.Issue(kind: kind, message: message.isEmpty ? "issue recorded" : message,
                                                              location: location, isFailure: counts))))
        }
        for _ in 0..<(rng.chance(20) ? rng.range(1...3) : 0) {
            out.append(StreamLine(event("testCaseStarted", raw: raw, instant: instant(time).text), nil))
            out.append(StreamLine(event("testCaseEnded", raw: raw, instant: instant(time).text), nil))
        }
        time += rng.unit() * (rng.chance(90) ? 0.1 : 100)
        let end = instant(time)
        let duration = zipped(start.value, end.value).map { max(0, $1 - $0) } ?? 0
        let ended = TestEvent.ended(id, failed ? .failed : .passed, duration: duration, reason: nil)
        out.append(StreamLine(event("testEnded", raw: raw, instant: end.text), ended))
        return out
    }


    /// A random merge that keeps each list's own order (concurrent tests).
    static func interleave<T>(_ lists: [[T]], _ rng: inout FuzzRNG) -> [T] {
        var rest = lists.map { $0[...] }
        var out: [T] = []
        while true {
            let open = rest.indices.filter { !rest[$0].isEmpty }
            guard !open.isEmpty else { return out }
            let i = rng.pick(open)
            if let first = rest[i].popFirst() { out.append(first) }
        }
    }

    static let jsonNumbers = [
        "0", "-0", "1", "-1", "3.5", "0.1", "1e308", "-1e308", "1.7976931348623157e308", "-1.7976931348623157e308",
        "1e999", "-1e999", "5e-324", "1e-999", "123456789012345678901234567890", "9223372036854775807",
        "9223372036854775808", "-9223372036854775809", "2147483648", "551.00481463", "1795302022.3064709",
        // not JSON numbers at all
        "NaN", "Infinity", "-Infinity", "+1", "01", ".5", "1.", "0x10", "1e", "--1",
    ]
    static let eventKinds = ["testStarted", "testEnded", "testSkipped", "issueRecorded", "testCaseStarted", "testCaseEnded",
                             "runStarted", "runEnded", "valueAttached", "expectationChecked", "", "TESTENDED", "testEnded "]
    static let rawIDs = [
        "", ".", "M.", ".S", "/", "M./", "M.S/", "M.S//", "M.S/f()", "M.S/f()/F.swift:1:2", "M.S/F.swift:1:2",
        "F.swift:1:2", "M.f()", "M.f()/F.swift:1:2", "M.S/Inner/g(x:)/F.swift:3:4", "M.S/x.swift:1:2/x.swift:3:4",
        "M.S/f()/F.swift:99999999999999999999:1", "M..S/f()", "é.日/ß()", "M.S/\u{301}", "M.S/f()\n", "M.S/f()\u{0}",
    ]

    mutating func randomJSON(_ depth: Int) -> String {
        switch rng.below(depth > 2 ? 6 : 9) {
        case 0: return "null"
        case 1: return rng.chance(50) ? "true" : "false"
        case 2: return rng.pick(Self.jsonNumbers)
        case 3: return json(prose())
        case 4: return json(rng.pick(Self.rawIDs))
        case 5: return json(rng.pick(Self.eventKinds + ["test", "event", "suite", "function"]))
        case 6: return "[" + (0..<rng.range(0...3)).map { _ in randomJSON(depth + 1) }.joined(separator: ",") + "]"
        case 7: return payload(depth + 1, pool: Self.rawIDs)
        default:
            return object((0..<rng.range(0...3)).map { _ in
                Field(rng.pick(["kind", "payload", "text", "absolute", "line", "x"]), randomJSON(depth + 1))
            })
        }
    }

    /// A payload whose fields are each present or not, well typed or not.
    mutating func payload(_ depth: Int, pool: [String]) -> String {
        func field(_ good: () -> String) -> String? {
            switch rng.below(10) {
            case 0..<3: return nil
            case 3: return randomJSON(depth + 1)
            default: return good()
            }
        }
        /// The value of a field, or the field left out.
        func maybe(_ percent: Int, _ value: () -> String) -> String? { rng.chance(percent) ? value() : nil }
        let id = rng.pick(pool)
        return object([
            Field("kind", field { json(rng.pick(Self.eventKinds + ["suite", "function"])) }),
            Field("testID", field { json(id) }),
            Field("id", field { json(id) }),
            Field("name", field { json(prose()) }),
            Field("instant", field {
                object([Field("absolute", maybe(80) { rng.pick(Self.jsonNumbers) }),
                        Field("since1970", maybe(50) { rng.pick(Self.jsonNumbers) })])
            }),
            Field("issue", field {
                let place = maybe(70) {
                    object([Field("filePath", maybe(70) { json(prose()) }),
                            Field("fileID", maybe(50) { json("") }),
                            Field("line", maybe(80) { rng.pick(Self.jsonNumbers) })])
                }
                return object([Field("isFailure", maybe(70) { randomBool() }), Field("isKnown", maybe(50) { randomBool() }),
                               Field("sourceLocation", place)])
            }),
            Field("messages", field {
                let messages = (0..<rng.range(0...2)).map { _ in
                    let text = rng.chance(30) ? "Test f() skipped: \"\(prose())\"" : prose()
                    return object([Field("symbol", maybe(80) { json("fail") }),
                                   Field("text", rng.chance(80) ? json(text) : randomJSON(depth + 1))])
                }
                return "[" + messages.joined(separator: ",") + "]"
            }),
        ])
    }

    mutating func randomBool() -> String { rng.pick(["true", "false", "null", "1", "\"true\""]) }

    mutating func damagedTestingStream(maxLines: Int) -> FuzzInput {
        // A few ids per stream so that starts, issues and ends meet.
        let pool = (0..<3).map { _ in
            rng.chance(70) ? "\(identifier()).\(identifier())/\(identifier())()/F.swift:\(rng.range(1...9)):2" : rng.pick(Self.rawIDs)
        }
        var lines: [String] = []
        if rng.chance(20) {
            // A test that starts and ends, at any two instants (far apart ones once made an infinite duration).
            let kind = rng.chance(80) ? "testEnded" : "testSkipped"
            for event in ["testStarted", kind] {
                let instant = object([Field("absolute", rng.pick(Self.jsonNumbers)),
                                      Field("since1970", rng.chance(30) ? rng.pick(Self.jsonNumbers) : nil)])
                lines.append(object([Field("kind", "\"event\""),
                                     Field("payload", object([Field("kind", json(event)), Field("testID", json(pool[0])),
                                                              Field("instant", instant)]))]))
            }
        }
        for _ in 0..<(maxLines > 1 && rng.chance(80) ? 1 : rng.range(1...maxLines)) {
            switch rng.below(40) {
            case 0:
                // Deeply nested: must not exhaust the stack.
                // 512 exactly, at the end of the line, made Foundation's JSONDecoder trap (FuzzRegressionTests).
                let depth = rng.chance(95) ? rng.pick([64, 65, 300, 511, 512, 513, 600]) : rng.pick([5000, 20000])
                lines.append("{\"kind\":\"event\",\"payload\":" + String(repeating: rng.chance(50) ? "[" : "{\"a\":", count: depth))
            case 1:
                lines.append(randomJSON(0))
            case 2:
                lines.append(prose())
            default:
                let kind = rng.chance(85) ? json(rng.pick(["event", "event", "test"])) : randomJSON(2)
                lines.append(object([Field("kind", rng.chance(95) ? kind : nil), Field("payload", rng.chance(95) ? payload(0, pool: pool) : randomJSON(1)),
                                     Field("version", rng.chance(50) ? json("6.3.0") : nil)]))
            }
        }
        var bytes = Array(lines.joined(separator: rng.chance(10) ? "\r\n" : "\n").utf8)
        if rng.chance(30) { mutate(&bytes, times: rng.range(1...2)) }
        return FuzzInput(target: .swiftTesting, stdout: bytes)
    }

    // MARK: Listings

    mutating func dumpNode(_ depth: Int) -> String {
        var name: String? = switch rng.below(12) {
        case 0: json("")
        case 1: json(".\(identifier())")
        case 2: json("\(identifier()).")
        case 3: randomJSON(2)
        case 4: nil
        default: json(depth == 2 ? "\(identifier()).\(identifier())" : identifier())
        }
        if depth == 3, rng.chance(80) { name = json(rng.chance(5) ? "" : "test" + identifier()) }
        var tests: String?
        if depth < 3 {
            tests = switch rng.below(10) {
            case 0: nil
            case 1: "null"
            case 2: randomJSON(2)
            default: "[" + (0..<rng.range(0...3)).map { _ in dumpNode(depth + 1) }.joined(separator: ",") + "]"
            }
        }
        return object([Field("name", name), Field("tests", tests)])
    }

    mutating func fuzzListing() {
        result.listings += 1
        if rng.chance(50) {
            var bytes: [UInt8]
            switch rng.below(20) {
            case 0: bytes = corpus.dumpJSON
            case 1..<4: bytes = window(corpus.all, maxLines: 3)
            case 4:
                // Deep nesting, open or balanced (512 open at the end made JSONDecoder trap).
                let depth = rng.pick([63, 64, 65, 200, 511, 512, 513])
                bytes = Array((rng.chance(50) ? #"{"name":"a","tests":"# + String(repeating: "[", count: depth)
                    : String(repeating: #"{"name":"a","tests":["#, count: depth / 2) + String(repeating: "]}", count: depth / 2)).utf8)
            default: bytes = Array(dumpNode(0).utf8)
            }
            if rng.chance(20) { bytes = Array("warning: \(prose())\n".utf8) + bytes }
            if rng.chance(60) { mutate(&bytes, times: rng.range(1...3)) }
            traceInput(bytes)
            let text = String(decoding: bytes, as: UTF8.self)
            do {
                let suites = try XCTestRunner().parseListing(text)
                if let problem = Self.listingViolation(suites, uniqueTests: false) {
                    fail(.listing, "XCTest: \(problem)", FuzzInput(target: .swiftTesting, stdout: bytes))
                }
            } catch {
                result.listingsThrown += 1
            }
        } else {
            var bytes = window(rng.chance(70) ? corpus.listings : corpus.all, maxLines: 12)
            mutate(&bytes, times: rng.range(1...3))
            traceInput(bytes)
            let text = String(decoding: bytes, as: UTF8.self)
            do {
                let suites = try SwiftTestingRunner().parseListing(text)
                if let problem = Self.listingViolation(suites, uniqueTests: true) {
                    fail(.listing, "Swift Testing: \(problem)", FuzzInput(target: .swiftTesting, stdout: bytes))
                }
            } catch {
                result.listingsThrown += 1
            }
        }
    }

    static func listingViolation(_ suites: [TestSuite], uniqueTests: Bool) -> String? {
        if Set(suites.map(\.id)).count != suites.count { return "a suite listed twice: \(suites.map(\.id))" }
        for s in suites {
            if s.id.module.isEmpty || s.id.name.isEmpty { return "a suite without a module or a name: \(s.id)" }
            if s.tests.contains(where: \.isEmpty) { return "a test without a name in \(s.id)" }
            if uniqueTests, Set(s.tests).count != s.tests.count { return "a test listed twice in \(s.id)" }
        }
        return nil
    }

    // MARK: Line buffer

    /// The line splitter against its specification: lines split at `\n`, a `\r` before it dropped, a line longer
    /// than the limit cut into pieces of exactly the limit, however the chunks fall.
    mutating func fuzzLineBuffer() {
        let limit = rng.chance(20) ? rng.range(1...4) : rng.range(5...64)
        var bytes: [UInt8] = []
        // Mostly valid UTF-8 (é, €), so cuts fall inside sequences; sometimes any byte (costly here, see above).
        let alphabet: [UInt8] = [0x61, 0x62, 0x0A, 0x0A, 0x0D, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0x00, 0x20]
        let anyByte = rng.chance(5)
        for _ in 0..<rng.range(0...(limit < 5 ? 16 : 80)) {
            if anyByte, rng.chance(30) { bytes.append(rng.byte()); continue }
            switch alphabet[rng.below(alphabet.count)] {
            case 0xC3: bytes += [0xC3, 0xA9]
            case 0xE2: bytes += [0xE2, 0x82, 0xAC]
            case 0xA9, 0x82, 0xAC: bytes.append(0x63)
            case let b: bytes.append(b)
            }
        }
        traceInput(bytes)
        var buffer = LineBuffer(maxLineLength: limit)
        var lines: [String] = []
        var plan = ChunkPlan(count: bytes.count, rng: &rng)
        while !plan.done { lines += buffer.append(Self.piece(bytes, plan.next(&rng))) }
        if let last = buffer.flush() { lines.append(last) }
        let expected = Self.referenceLines(bytes, limit: limit)
        result.ran(.lineBuffer)
        if lines != expected {
            fail(.lineBuffer, "limit \(limit): got \(lines), expected \(expected)", FuzzInput(target: .swiftTesting, stdout: bytes))
        }
    }

    static func referenceLines(_ bytes: [UInt8], limit: Int) -> [String] {
        func text(_ b: [UInt8], line: Bool) -> String {
            String(decoding: line && b.last == 0x0D ? b.dropLast() : b[...], as: UTF8.self)
        }
        var out: [String] = []
        var current: [UInt8] = []
        for b in bytes {
            if b == 0x0A {
                out.append(text(current, line: true))
                current = []
            } else {
                current.append(b)
                if current.count > limit {
                    out.append(text(Array(current.prefix(limit)), line: false))
                    current.removeFirst(limit)
                }
            }
        }
        if !current.isEmpty { out.append(text(current, line: true)) }
        return out
    }
}

/// One key of a JSON object and its value as JSON text (nil: the key is left out). A struct, not a tuple: a debug
/// build looks tuple metadata up on every access.
struct Field {
    var key: String
    var value: String?

    init(_ key: String, _ value: String?) {
        self.key = key
        self.value = value
    }
}

/// A line of a generated stream and the event it must give.
struct StreamLine {
    var text: String
    var event: TestEvent?

    init(_ text: String, _ event: TestEvent?) {
        self.text = text
        self.event = event
    }
}

/// How one stream is cut into chunks: whole, byte by byte, small pieces, or random sizes.
struct ChunkPlan {
    private let count: Int
    private var position = 0
    private let mode: Int

    init(count: Int, rng: inout FuzzRNG) {
        self.count = count
        let roll = rng.below(100)
        let drawn = switch roll {
        case 0..<35: 0
        case 35..<37 where count <= 200: 1
        case 37..<55: 2
        default: 3
        }
        mode = drawn
    }

    var done: Bool { position >= count }

    mutating func next(_ rng: inout FuzzRNG) -> Range<Int> {
        let rest = count - position
        let n = switch mode {
        case 0: rest
        case 1: 1
        case 2: rng.range(1...24)
        default: rng.range(1...max(1, rest))
        }
        let r = position..<min(count, position + n)
        position = r.upperBound
        return r
    }
}

private func zipped(_ a: Double?, _ b: Double?) -> (Double, Double)? {
    guard let a, let b else { return nil }
    return (a, b)
}

private extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

// MARK: - Scaling

enum FuzzScaling {
    enum Case: String, CaseIterable, Sendable, CustomStringConvertible {
        /// An assertion message followed by many long continuation lines (FuzzRegressionTests pins the copy that
        /// made these quadratic; the slow scanning of each line hides it from a timing check).
        case longIssueMessage
        /// One enormous line without a newline, arriving in small chunks.
        case endlessLine
        /// Many tests started, skipped and never ended.
        case manyOpenTests
        /// Swift Testing records with long strings and many ids.
        case eventStream
        /// A long stderr backtrace while a test runs.
        case trapOutput
        /// xcodebuild's console of many tests, then a result bundle that corrects every verdict.
        case xcodebuildUnit
        /// A result bundle of many test cases, each with a failure message.
        case resultBundle
        /// A test list of many tests of one class.
        case testList
        /// An .xctestrun file of many test targets, each with its folder.
        case xctestrunTargets

        var description: String { rawValue }
    }

    /// Seconds to parse the case's input at `size` (1 or 4).
    static func time(_ c: Case, size: Int) -> Double {
        let (stdout, stderr, chunk) = input(c, size: size)
        let clock = ContinuousClock()
        let start = clock.now
        var events = 0
        switch c {
        case .eventStream:
            events = feed(SwiftTestingEventParser(), stdout, stderr, chunk)
        case .xcodebuildUnit:
            let item = WorkItem(suite: SuiteID(module: "T", name: "C"), framework: .xcodebuild, destination: "local",
                                tests: (0..<(xcodebuildTests * size)).map { "test\($0)" }, isWholeSuite: true, estimate: 1,
                                source: .noHistory(secondsPerTest: 0.1))
            events = feed(XcodebuildOutputParser(unit: WorkUnit(id: 1, items: [item])), stdout, stderr, chunk)
        case .resultBundle:
            events = (try? XCResultParser.parse(stdout).count) ?? 0
        case .testList:
            events = (try? TestEnumeration.parse(String(decoding: stdout, as: UTF8.self)).count) ?? 0
        case .xctestrunTargets:
            events = (try? XCTestRunFile.parse(Data(stdout)).targets.count) ?? 0
        default:
            events = feed(XCTestOutputParser(suites: [SuiteID(module: "M", name: "C")]), stdout, stderr, chunk)
        }
        let d = start.duration(to: clock.now)
        precondition(events >= 0)
        return d.seconds
    }

    static func feed<P: OutputParser>(_ parser: P, _ out: [UInt8], _ err: [UInt8], _ chunk: Int) -> Int {
        var p = parser
        var n = 0
        var i = 0
        while i < out.count {
            n += p.consume(stdout: Array(out[i..<min(out.count, i + chunk)])).count
            i += chunk
        }
        n += p.consume(stderr: err).count
        return n + p.finish().count
    }

    static let xcodebuildTests = 1_000

    static func input(_ c: Case, size: Int) -> ([UInt8], [UInt8], Int) {
        switch c {
        case .longIssueMessage:
            // The parser keeps up to 200 continuation lines: 40 vs 160 lines of 20 KB.
            var text = "Test Case 'C.testA' started at 2026\n/f.swift:1: error: C.testA : failed - x\n"
            let line = String(repeating: "y", count: 20_000) + "\n"
            for _ in 0..<(40 * size) { text += line }
            text += "Test Case 'C.testA' failed (0.1 seconds)\n"
            return (Array(text.utf8), [], 65_536)
        case .endlessLine:
            return (Array(repeating: UInt8(ascii: "x"), count: 1_500_000 * size), [], 4096)
        case .manyOpenTests:
            var text = ""
            for i in 0..<(2_000 * size) {
                text += "Test Case 'C.test\(i)' started at 2026\n/f.swift:1: C.test\(i) : Test skipped - why \(i)\n"
            }
            return (Array(text.utf8), [], 65_536)
        case .eventStream:
            var text = ""
            let long = String(repeating: "z", count: 2000)
            for i in 0..<(300 * size) {
                text += """
                    {"kind":"event","payload":{"kind":"testStarted","testID":"M.S/t\(i)()","instant":{"absolute":\(i)},\
                    "messages":[{"text":"\(long)"}]}}

                    """
            }
            return (Array(text.utf8), [], 65_536)
        case .trapOutput:
            var err = ""
            for i in 0..<(2_000 * size) { err += "W.swift:\(i): Fatal error: frame \(i) " + String(repeating: "q", count: 50) + "\n" }
            return (Array("Test Case 'C.testA' started at 2026\n".utf8), Array(err.utf8), 65_536)
        case .xcodebuildUnit:
            var text = ""
            for i in 0..<(xcodebuildTests * size) {
                text += "Test Case '-[T.C test\(i)]' started.\nTest Case '-[T.C test\(i)]' passed (0.001 seconds).\n"
            }
            text += XcodebuildRunner.bundleBegin + "\n"
            text += #"{"testNodes":[{"nodeType":"Test Plan","children":[{"name":"T","nodeType":"Unit test bundle","children":["#
            text += #"{"name":"C","nodeType":"Test Suite","children":["# + "\n"
            text += (0..<(xcodebuildTests * size)).map { i in
                #"{"name":"test\#(i)()","nodeIdentifier":"C/test\#(i)()","nodeType":"Test Case","result":"Failed","durationInSeconds":0.5,"#
                    + #""children":[{"name":"F.swift:\#(i + 1): XCTAssertTrue failed","nodeType":"Failure Message"}]}"#
            }.joined(separator: ",\n")
            text += "\n]}]}]}]}\n" + XcodebuildRunner.bundleEnd + "\n"
            return (Array(text.utf8), [], 65_536)
        case .resultBundle:
            let cases = (0..<(2_000 * size)).map { i in
                #"{"name":"test\#(i)()","nodeIdentifier":"C/test\#(i)()","nodeType":"Test Case","result":"Failed","duration":"1m 2,5s","#
                    + #""children":[{"name":"Arguments","nodeType":"Arguments","children":[{"name":"F.swift:\#(i + 1): failed","nodeType":"Failure Message"}]}]}"#
            }
            let text = #"{"testNodes":[{"nodeType":"Test Plan","children":[{"name":"T","nodeType":"Unit test bundle","children":["#
                + #"{"name":"C","nodeType":"Test Suite","children":["# + cases.joined(separator: ",") + "]}]}]}]}"
            return (Array(text.utf8), [], 0)
        case .testList:
            let tests = (0..<(3_000 * size)).map { #"{"identifier":"T/C/test\#($0)"}"# }
            return (Array((#"{"errors":[],"values":[{"disabledTests":[],"enabledTests":["# + tests.joined(separator: ",") + "]}]}").utf8), [], 0)
        case .xctestrunTargets:
            var text = #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>TestConfigurations</key><array><dict><key>TestTargets</key><array>"#
            for i in 0..<(800 * size) {
                text += "<dict><key>BlueprintName</key><string>T\(i)</string><key>TestBundlePath</key><string>__TESTROOT__/F\(i)/T.xctest</string></dict>"
            }
            text += "</array></dict></array></dict></plist>"
            return (Array(text.utf8), [], 0)
        }
    }
}
