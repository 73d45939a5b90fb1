import Foundation
import XCTest

/// Runs the package's `greeter` from the products folder, as many packages test their command-line tools: the test
/// target does not depend on the executable target, it finds the binary beside the test bundle at run time.
final class CLITests: XCTestCase {
    func greeter(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = Bundle.main.bundleURL.appendingPathComponent("greeter")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let out = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: out, as: UTF8.self)
    }

    func testGreetsByName() throws { XCTAssertEqual(try greeter(["Fanout"]), "Hello, Fanout!\n") }
    func testGreetsTheWorld() throws { XCTAssertEqual(try greeter([]), "Hello, world!\n") }
    func testGreetsTwoWords() throws { XCTAssertEqual(try greeter(["new user"]), "Hello, new user!\n") }
}
