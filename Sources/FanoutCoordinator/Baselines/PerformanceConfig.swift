import FanoutCore
import Yams

extension BaselineFile {
    /// The `performance:` block of fanout.yml (documented in config/fanout.example.yml and docs/baselines.md):
    /// ```yaml
    /// performance:
    ///   regression: { relative: 0.10, absolute: 0.1 }   # slower by more than 10% AND more than 0.1 s
    ///   noise: { relative: 0.10, absolute: 0.1 }        # SD more than 10% of the average AND more than 0.1 s
    ///   tests:                                          # overrides: exact id first, then the first match
    ///     - match: 'DemoKitTests.PerformanceTests/testMeasureSorting'
    ///       regression: { relative: 0.25 }
    /// ```
    /// Unknown keys are errors that name the file, the line and the key.
    static func parseRules(_ node: ConfigNode) throws(FanoutError) -> PerformanceRules {
        let keys = try node.mapping(allowed: ["regression", "noise", "tests"])
        var rules = PerformanceRules()
        if let r = keys["regression"] {
            let (relative, absolute) = try pair(r)
            if let relative { rules.relativeRegression = relative }
            if let absolute { rules.absoluteRegression = absolute }
        }
        if let n = keys["noise"] {
            let (relative, absolute) = try pair(n)
            if let relative { rules.relativeNoise = relative }
            if let absolute { rules.absoluteNoise = absolute }
        }
        if let tests = keys["tests"] {
            rules.overrides = try tests.list().map { item throws(FanoutError) in
                let o = try item.mapping(allowed: ["match", "regression", "noise"])
                guard let match = o["match"] else {
                    throw item.fail("needs a match: an exact Module.Class/test id or a regex searched in it")
                }
                let pattern = try match.string()
                guard TestPattern(pattern).isValid else {
                    throw match.fail("is not a valid regular expression ('\(pattern)')")
                }
                guard o["regression"] != nil || o["noise"] != nil else {
                    throw item.fail("sets no threshold: give it regression: or noise:")
                }
                var override = PerformanceRules.Override(test: pattern)
                if let r = o["regression"] {
                    (override.relativeRegression, override.absoluteRegression) = try pair(r)
                }
                if let n = o["noise"] {
                    (override.relativeNoise, override.absoluteNoise) = try pair(n)
                }
                return override
            }
        }
        return rules
    }

    /// The `performance:` block of a YAML document that holds only it (for tests and tools; fanout.yml goes through
    /// `ConfigFile`, which calls `parseRules(_:)`).
    static func parseRules(yaml text: String, file: String,
                           environment: [String: String] = [:]) throws(FanoutError) -> PerformanceRules {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw FanoutError("\(file): not valid YAML: \(error)")
        }
        guard let root else { return PerformanceRules() }
        let top = ConfigNode(node: root, path: "", file: file, environment: environment)
        guard let block = try top.mapping(allowed: ["performance"])["performance"] else { return PerformanceRules() }
        return try parseRules(block)
    }

    /// `{ relative: 0.10, absolute: 0.1 }`, either may be left out.
    private static func pair(_ node: ConfigNode) throws(FanoutError) -> (Double?, Double?) {
        let keys = try node.mapping(allowed: ["relative", "absolute"])
        guard !keys.isEmpty else { throw node.fail("needs relative: (a fraction, 0.10 = 10%) or absolute: (seconds)") }
        return (try keys["relative"]?.double(min: 0, max: 100), try keys["absolute"]?.double(min: 0))
    }
}
