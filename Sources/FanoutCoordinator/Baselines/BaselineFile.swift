import FanoutCore
import Foundation

/// The performance baselines committed with the user's project (`fanout-baselines.json` by default): for each test,
/// metric, destination and hardware class, the accepted average and, optionally, the standard deviation allowed.
/// The format is documented in docs/baselines.md.
///
/// The file is JSON with a version, pretty-printed with sorted keys and baselines in a stable order (test, metric,
/// destination, hardware class), so that accepting new baselines gives a small, readable diff in review.
public struct BaselineFile: Codable, Sendable, Hashable {
    public static let currentVersion = 1
    public static let defaultName = "fanout-baselines.json"

    /// The format's version: a file of another version is refused with a message saying so.
    public var version: Int
    public var baselines: [Baseline]

    public init(baselines: [Baseline] = []) {
        self.version = Self.currentVersion
        self.baselines = baselines
        sort()
    }

    // MARK: - Reading and writing

    /// Reads the file at `path`. A missing file is an empty set of baselines (nothing accepted yet); a file that
    /// cannot be read or is not a valid baselines file is an error (exit 2) naming the file and the problem.
    public static func load(_ path: String) throws(FanoutError) -> BaselineFile {
        guard FileManager.default.fileExists(atPath: path) else { return BaselineFile() }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw FanoutError("cannot read the baselines file \(path): \(error.localizedDescription)",
                              hint: "Check its permissions, or pass another file with --baselines.")
        }
        return try decode(data, source: path)
    }

    /// Parses the bytes of a baselines file; `source` names it in errors.
    public static func decode(_ data: Data, source: String) throws(FanoutError) -> BaselineFile {
        let hint = "Fix the file (see docs/baselines.md), or restore it from version control and accept again with "
            + "`fanout baseline accept --from <report.json>`."
        struct Header: Decodable { var version: Int? }
        let header: Header
        do {
            header = try JSONDecoder().decode(Header.self, from: data)
        } catch {
            throw FanoutError("\(source) is not a valid baselines file: \(describe(error))", hint: hint)
        }
        guard let version = header.version else {
            throw FanoutError("\(source) is not a valid baselines file: it has no \"version\"", hint: hint)
        }
        guard version == currentVersion else {
            throw FanoutError(
                "\(source) is a version \(version) baselines file, but this fanout reads version \(currentVersion)",
                hint: version > currentVersion ? "Upgrade fanout to the version that wrote it." : hint)
        }
        do {
            var file = try JSONDecoder().decode(BaselineFile.self, from: data)
            for (i, b) in file.baselines.enumerated() where !b.average.isFinite || b.average < 0 {
                throw FanoutError("\(source) is not a valid baselines file: baselines[\(i)] (\(b.test)) has the "
                    + "average \(b.average); it must be a number ≥ 0", hint: hint)
            }
            for (i, b) in file.baselines.enumerated() {
                if let sd = b.maxStandardDeviation, !sd.isFinite || sd < 0 {
                    throw FanoutError("\(source) is not a valid baselines file: baselines[\(i)] (\(b.test)) has the "
                        + "maxStandardDeviation \(sd); it must be a number ≥ 0", hint: hint)
                }
            }
            file.sort()
            return file
        } catch let error as FanoutError {
            throw error
        } catch {
            throw FanoutError("\(source) is not a valid baselines file: \(describe(error))", hint: hint)
        }
    }

    /// The bytes of the file: pretty, sorted keys, slashes unescaped, ending with a newline.
    public func encoded() throws(FanoutError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var file = self
        file.sort()
        do {
            var data = try encoder.encode(file)
            data.append(0x0A)
            return data
        } catch {
            throw FanoutError("cannot encode the baselines: \(error)")
        }
    }

    /// Writes the file atomically (a temporary file renamed over it): a reader, or a second fanout, never sees half
    /// a file, and a failed write leaves the old one as it was.
    public func save(_ path: String) throws(FanoutError) {
        let data = try encoded()
        let url = URL(fileURLWithPath: path)
        do {
            let folder = url.deletingLastPathComponent()
            if !FileManager.default.fileExists(atPath: folder.path) {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
            try data.write(to: url, options: .atomic)
        } catch {
            throw FanoutError("cannot write the baselines file \(path): \(error.localizedDescription)",
                              hint: "Make its folder writable, or pass another file with --baselines.")
        }
    }

    // MARK: - Accepting

    /// What `accept` did.
    public struct Acceptance: Sendable, Hashable {
        /// The baselines written (new or replacing one with the same key), in file order.
        public var accepted: [Baseline]
        /// How many of them replaced an existing baseline.
        public var replaced: Int
        /// Measurements that matched but were not accepted because they are too noisy to be a baseline.
        public var tooNoisy: [MeasurementRecord]
    }

    /// Accepts the measurements of `report` (those of tests whose id matches `testPattern`, or all) as baselines:
    /// for each, its average (the mean of its values) on its destination and hardware class, replacing the
    /// baseline with the same test, metric, destination and hardware class. The allowed standard deviation is left
    /// to the rule's default (as Xcode leaves its max STDDEV), and the measurement's own standard deviation is kept
    /// for reference. A measurement that is too noisy (its verdict in the report, else `rules`) is not accepted: a
    /// baseline from it would judge nothing.
    /// - Throws: exit 2 when `testPattern` is not a valid pattern, or when no measurement of the report matches.
    public mutating func accept(from report: RunReport, testPattern: String?,
                                rules: PerformanceRules = PerformanceRules()) throws(FanoutError) -> Acceptance {
        let pattern = testPattern.map(TestPattern.init)
        if let pattern, !pattern.isValid {
            throw FanoutError("--test '\(pattern)' is not a valid regular expression",
                              hint: "Give an exact Module.Class/test id, or a regex searched in it, e.g. 'PerformanceTests/'.")
        }
        let matching = report.measurements.filter { pattern?.matches($0.measurement.test) ?? true }
        guard !matching.isEmpty else {
            let what = report.measurements.isEmpty ? "has no measurements (no test called measure {})"
                : "has no measurement of a test matching '\(testPattern ?? "")' (it has "
                    + "\(report.measurements.count): \(Set(report.measurements.map(\.measurement.test.description)).sorted().prefix(5).joined(separator: ", ")))"
            throw FanoutError("the report of run \(report.runID) \(what)",
                              hint: "Pass the report.json of a run of the performance tests, and check --test.")
        }
        let judge = PerformanceJudge(rules: rules)
        var byKey = Dictionary(baselines.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
        var accepted: [Baseline.Key: Baseline] = [:]
        var replaced = Set<Baseline.Key>()
        var noisy: [MeasurementRecord] = []
        for record in matching {
            let m = record.measurement
            let verdict = record.verdict ?? judge.verdict(for: m, destination: record.destination,
                                                          hardwareClass: record.hardwareClass, baselines: [])
            guard verdict.kind != .tooNoisy, m.meanOfValues.isFinite else {
                noisy.append(record)
                continue
            }
            let key = Baseline.Key(record)
            if byKey[key] != nil, accepted[key] == nil { replaced.insert(key) }
            // A later measurement of the same key (a retried test) wins, as it decided the test's outcome.
            let baseline = Baseline(test: m.test, metric: key.metric, destination: key.destination,
                                    hardwareClass: key.hardwareClass, average: Self.rounded(m.meanOfValues),
                                    unit: m.unit, standardDeviation: Self.rounded(m.sampleStandardDeviation),
                                    runID: report.runID)
            accepted[key] = baseline
            byKey[key] = baseline
        }
        baselines = Array(byKey.values)
        sort()
        return Acceptance(accepted: accepted.values.sorted { $0.key < $1.key }, replaced: replaced.count,
                          tooNoisy: noisy)
    }

    // MARK: - Support

    /// To a nanosecond (for seconds; 1e-9 of the unit otherwise): far below XCTest's microsecond values, and it
    /// keeps binary noise (0.021246300000000003) out of a file people review.
    static func rounded(_ value: Double) -> Double {
        guard value.isFinite, abs(value) < 1e9 else { return value }
        return (value * 1e9).rounded() / 1e9
    }

    private mutating func sort() {
        baselines.sort { $0.key < $1.key }
    }

    static func show(_ value: Double, _ unit: String) -> String { PerformanceText.value(value, unit: unit) }

    static func percent(_ fraction: Double) -> String { PerformanceText.percent(fraction) }

    /// `baselines[2].average: expected Double`: where in the file, then what was wrong.
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ keys: [any CodingKey]) -> String {
            var text = ""
            for key in keys {
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
            return text.isEmpty ? "top level" : text
        }
        switch error {
        case .typeMismatch(let type, let c): return "\(path(c.codingPath)): expected \(type)"
        case .valueNotFound(let type, let c): return "\(path(c.codingPath)): missing \(type) value"
        case .keyNotFound(let key, let c): return "\(path(c.codingPath + [key])): required field is missing"
        case .dataCorrupted(let c):
            let underlying = (c.underlyingError as NSError?).map { " (\($0.localizedDescription))" } ?? ""
            return c.codingPath.isEmpty ? "not valid JSON\(underlying)" : "\(path(c.codingPath)): \(c.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}
