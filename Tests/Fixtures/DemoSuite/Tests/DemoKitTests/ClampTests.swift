import Foundation
import XCTest
import DemoKit

final class ClampTests: XCTestCase {
    func testClampInsideRange() {
        simulateLatency(0.075)
        XCTAssertEqual(Arithmetic.clamp(5, to: 0...10), 5)
    }

    func testClampOutsideRange() {
        simulateLatency(0.025)
        XCTAssertEqual(Arithmetic.clamp(-3, to: 0...10), 0)
        XCTAssertEqual(Arithmetic.clamp(2.5, to: 0.0...1.0), 1.0)
        if DemoEnv.isSet("DEMO_HOSTILE") {
            // DEMO_HOSTILE=1: output that tries to take over the terminal of whoever watches the run.
            print(Hostile.text("stdout"))
            FileHandle.standardError.write(Data((Hostile.text("stderr") + "\n").utf8))
            XCTFail(Hostile.text("HOSTILE-VISIBLE-XCTEST"), file: "Clamp\u{1B}]0;HOSTILE-LOCATION\u{07}Tests.swift", line: 7)
        }
    }
}

/// Escape sequences a hostile test prints (DEMO_HOSTILE=1). Every payload between the markers is meant to vanish;
/// the `visible` word must reach the terminal as plain text.
enum Hostile {
    static func text(_ visible: String) -> String {
        visible
            + " \u{1B}]0;HOSTILE-TITLE\u{07}"                       // set the window title (OSC 0)
            + "\u{1B}]52;c;SE9TVElMRS1DTElQQk9BUkQ=\u{07}"           // write the clipboard (OSC 52)
            + "\u{1B}]8;;https://HOSTILE-LINK.example\u{1B}\\link\u{1B}]8;;\u{1B}\\" // a hyperlink
            + "\u{1B}[2K\u{1B}[1A\u{1B}[2K"                          // erase lines above
            + "\u{1B}[8mHOSTILE-CONCEALED\u{1B}[28m"                  // invisible text (its codes go, the text stays)
            + "\u{9D}0;HOSTILE-C1-TITLE\u{9C}"                      // C1 OSC
            + "\u{202E}HOSTILE-RLO\u{202C} end"                     // right-to-left override
            + "\r[  99.9s] 999/999 tests · ETA 0s"               // a fake progress line over the real one
    }
}
