import XCTest

/// The polluter of `VictimTests.testNoMarkerFile`: leaves a file behind in its process's folder.
final class FileWriterTests: XCTestCase {
    func testWritesMarker() throws {
        try "left behind".write(toFile: processFolder + "/marker", atomically: true, encoding: .utf8)
    }
}
