import Foundation
import Left
import XCTest

final class LeftTests: XCTestCase {
    func testQuadruple() { XCTAssertEqual(Left.quadruple(3), 12) }

    /// Crashes or blocks when the file named by DIAMOND_CRASH / DIAMOND_HANG exists: the verdict changes while
    /// every input of the package stays the same.
    func testSwitches() {
        let env = ProcessInfo.processInfo.environment
        if let path = env["DIAMOND_CRASH"], FileManager.default.fileExists(atPath: path) { fatalError("crash switch on") }
        if let path = env["DIAMOND_HANG"], FileManager.default.fileExists(atPath: path) {
            while FileManager.default.fileExists(atPath: path) { Thread.sleep(forTimeInterval: 0.05) }
        }
    }
}
