import FanoutCore
import Foundation
import Testing
@testable import FanoutRunners

@Suite struct FuzzBenchScratch {
    func t(_ label: String, _ n: Int, _ body: () -> Int) {
        let c = ContinuousClock()
        let s = c.now
        var k = 0
        for _ in 0..<n { k &+= body() }
        let d = s.duration(to: c.now)
        let us = (Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18) / Double(n) * 1e6
        print("bench \(label): \(String(format: "%.2f", us)) us \(k)")
    }

    @Test func bench() throws {
        let xl = Array("Test Case 'ArithmeticTests.testAdd' passed (0.031 seconds)\n".utf8)
        let noise = Array("some random noise line here\n".utf8)
        let stl = try Captures.bytes("swift-testing-fail.jsonl").split(separator: 10).map { Array($0) + [10] }
        let evt = stl.first { String(decoding: $0, as: UTF8.self).contains("testEnded") }!
        let short = Array(#"{"kind":"event","payload":{"kind":"testEnded","testID":"M.S/f()","instant":{"absolute":1.5}}}"#.utf8) + [10]
        let suites = try XCTestRunner().parseListing(try Captures.text("dump-tests.json")).map(\.id)
        t("xctest init", 20000) { _ = XCTestOutputParser(suites: suites); return 1 }
        t("xctest init small", 20000) { _ = XCTestOutputParser(suites: [SuiteID(module: "M", name: "C")]); return 1 }
        t("xctest testcase line", 20000) { var p = XCTestOutputParser(suites: []); return p.consume(stdout: xl).count + p.finish().count }
        t("xctest noise line", 20000) { var p = XCTestOutputParser(suites: []); return p.consume(stdout: noise).count + p.finish().count }
        t("st init", 20000) { _ = SwiftTestingEventParser(); return 1 }
        t("st real event line \(evt.count)", 5000) { var p = SwiftTestingEventParser(); return p.consume(stdout: evt).count + p.finish().count }
        t("st short event line \(short.count)", 20000) { var p = SwiftTestingEventParser(); return p.consume(stdout: short).count + p.finish().count }
        t("st noise", 20000) { var p = SwiftTestingEventParser(); return p.consume(stdout: noise).count + p.finish().count }
        t("st bad json", 20000) { var p = SwiftTestingEventParser(); return p.consume(stdout: Array("{\"kind\":[1,2,\n".utf8)).count }
        var r = FuzzRNG(seed: 1)
        t("rng 64 bytes", 20000) { var a: [UInt8] = []; for _ in 0..<64 { a.append(r.byte()) }; return a.count }
    }
}
