import Foundation
import XCTest
import DemoKit

enum ConfigError: Error {
    case missingKey(String)
}

/// key=value lines; blank lines, comments and lines without '=' are ignored.
private func parseConfig(_ text: String) -> [String: String] {
    var result: [String: String] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        let parts = line.split(separator: "=", maxSplits: 1)
        guard parts.count == 2 else { continue }
        result[parts[0].trimmingCharacters(in: .whitespaces)] = parts[1].trimmingCharacters(in: .whitespaces)
    }
    return result
}

/// DEMO_THROW=1: testLoadFromEnvironment throws ConfigError.missingKey.
final class ConfigLoadingTests: XCTestCase {
    func testDefaultsApply() {
        simulateLatency(0.1)
        let config = parseConfig("")
        XCTAssertEqual(config["workers", default: "2"], "2")
    }

    func testLoadFromEnvironment() throws {
        simulateLatency(0.033)
        if DemoEnv.isSet("DEMO_THROW") {
            // DEMO_THROW=1: the test itself throws.
            throw ConfigError.missingKey("DEMO_CONFIG_PATH")
        }
        let config = parseConfig("workers=4")
        XCTAssertEqual(config["workers"], "4")
    }

    func testParseKeyValueLines() {
        simulateLatency(0.067)
        let config = parseConfig("a=1\nb = 2\n# comment\nbroken")
        XCTAssertEqual(config, ["a": "1", "b": "2"])
    }
}
