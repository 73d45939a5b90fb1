import FanoutCore
import Foundation

/// Apple-platform tests built with `xcodebuild build-for-testing`: the product is the `.xctestrun` file, a unit
/// runs as `xcodebuild test-without-building -xctestrun … -destination … -only-testing:Target/Class[/method] …`
/// on the slot's own simulator (or the Mac), its console is parsed as it arrives, and afterwards its result bundle
/// is read with `xcrun xcresulttool get test-results tests` for the authoritative verdicts (Xcode 16 and later).
///
/// Suites are `Target.Class` (the test target is the module): `-only-testing:` takes `Target/Class/method`.
public struct XcodebuildRunner: TestRunner {
    public init() {}

    public var framework: Framework { .xcodebuild }

    /// The lines around the result bundle's JSON in a unit's standard output.
    public static let bundleBegin = "=== fanout: xcresulttool test-results begin ==="
    public static let bundleEnd = "=== fanout: xcresulttool test-results end ==="
    /// The lines around each exported attachment (base64) and the export's manifest.
    public static let attachmentBegin = "=== fanout: attachment begin "
    public static let attachmentEnd = "=== fanout: attachment end ==="
    /// Attachments larger than this stay on the agent (a video of a whole UI test, say).
    public static let attachmentLimit = 8 << 20

    /// Lists the tests with `xcodebuild -enumerate-tests` (Xcode 16 and later) on the destination's device, printing
    /// the JSON listing on standard output.
    public func listCommand(binary: String, destination: Destination) -> Command {
        let device = destination.device ?? Device(platform: "macOS")
        let script = """
            f=$(mktemp "${TMPDIR:-/tmp}/fanout-tests.XXXXXX") || exit 70
            \(ShellQuote.commandWord(device.xcodebuild)) test-without-building -xctestrun \(ShellQuote.quote(binary)) \
            -destination \(ShellQuote.quote(device.destinationSpecifier)) -enumerate-tests \
            -test-enumeration-style flat -test-enumeration-format json -test-enumeration-output-path "$f" >&2
            s=$?
            [ $s = 0 ] && cat "$f"
            rm -f "$f"
            exit $s
            """
        return Command(executable: "/bin/sh", arguments: ["-c", script], environment: destination.environment)
    }

    public func parseListing(_ output: String) throws(ListingError) -> [TestSuite] {
        try TestEnumeration.parse(output)
    }

    public func command(for unit: WorkUnit, binary: String, destination: Destination) throws(RunnerError) -> Command {
        guard unit.framework == .xcodebuild else { throw RunnerError("XcodebuildRunner cannot run a \(unit.framework) unit") }
        guard unit.testCount > 0 else { throw RunnerError("unit \(unit.id) holds no test: a unit must select at least one") }
        let device = destination.device ?? Device(platform: "macOS")
        if device.isSimulator, device.udid == nil {
            throw RunnerError("destination \(destination.name) runs on a simulator, but this slot has none")
        }
        let q = ShellQuote.quote
        // Fanout runs its own slots in parallel, one simulator each: xcodebuild's parallel clones would share them.
        var xcodebuild = [ShellQuote.commandWord(device.xcodebuild), "test-without-building", "-xctestrun", q(binary),
                          "-destination", q(device.destinationSpecifier), "-resultBundlePath", "\"$r/unit.xcresult\"",
                          "-parallel-testing-enabled", "NO"]
        xcodebuild += Self.onlyTesting(for: unit).map { q("-only-testing:" + $0) }
        xcodebuild += destination.arguments.map(q)
        let xcrun = ShellQuote.commandWord(device.xcrun)
        // The result bundle lives in a private temporary folder of the agent, removed when the unit ends (a unit killed
        // at its time limit cannot: later units remove such folders once they are 12 hours old). When a test
        // failed, the attachments of failures (UI tests' screenshots) come back on standard output first, in base64
        // with the export's manifest, which says whose they are.
        let script = """
            t=${TMPDIR:-/tmp}
            find "$t" -maxdepth 1 -name 'fanout-xcresult.*' -mmin +720 -exec rm -rf {} + 2>/dev/null
            r=$(mktemp -d "$t/fanout-xcresult.XXXXXX") || exit 70
            trap 'rm -rf "$r"' EXIT
            \(xcodebuild.joined(separator: " "))
            s=$?
            echo
            echo \(q(Self.bundleBegin))
            [ -d "$r/unit.xcresult" ] && \(xcrun) xcresulttool get test-results tests --path "$r/unit.xcresult" --format json
            echo
            echo \(q(Self.bundleEnd))
            if [ $s != 0 ] && [ -d "$r/unit.xcresult" ] && \(xcrun) xcresulttool export attachments --path "$r/unit.xcresult" \
              --output-path "$r/attachments" --only-failures >/dev/null 2>&1; then
              for f in "$r/attachments"/*; do
                [ -f "$f" ] && [ $(($(wc -c < "$f"))) -le \(Self.attachmentLimit) ] || continue
                echo "\(Self.attachmentBegin)${f##*/} ==="
                base64 < "$f"
                echo \(q(Self.attachmentEnd))
              done
            fi
            exit $s
            """
        // xcodebuild hands the test process only variables prefixed TEST_RUNNER_ (prefix removed): the worker identity
        // reaches the tests that way. (The rest of `environment:` stays xcodebuild's own, e.g. DEVELOPER_DIR.)
        var environment = destination.environment
        for name in WorkerIdentity.names { if let value = environment[name] { environment["TEST_RUNNER_" + name] = value } }
        return Command(executable: "/bin/sh", arguments: ["-c", script], environment: environment)
    }

    /// `Target/Class` for whole classes, `Target/Class/method` for parts of classes.
    public static func onlyTesting(for unit: WorkUnit) -> [String] {
        unit.items.flatMap { item -> [String] in
            // Swift Testing functions outside any suite are `Target/func()`: selected one by one.
            if item.suite.name == SuiteID.swiftTestingTopLevel { return item.tests.map { "\(item.suite.module)/\($0)" } }
            let base = "\(item.suite.module)/\(item.suite.name)"
            return item.isWholeSuite ? [base] : item.tests.map { "\(base)/\($0)" }
        }
    }

    public func makeParser(for unit: WorkUnit) -> any OutputParser {
        XcodebuildOutputParser(unit: unit)
    }
}
