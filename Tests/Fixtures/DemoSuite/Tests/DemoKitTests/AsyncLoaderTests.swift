import Foundation
import XCTest
import DemoKit

/// DEMO_EXPECTATION_TIMEOUT=1: testLoadCompletesBeforeDeadline waits 0.2 s for an expectation that is never fulfilled.
final class AsyncLoaderTests: XCTestCase {
    func testLoadCompletesBeforeDeadline() async {
        simulateLatency(0.15)
        let loaded = expectation(description: "payload loaded")
        let neverFulfil = DemoEnv.isSet("DEMO_EXPECTATION_TIMEOUT")
        Task.detached {
            try? await Task.sleep(nanoseconds: 50_000_000)
            // DEMO_EXPECTATION_TIMEOUT=1: the loader never reports back.
            if !neverFulfil { loaded.fulfill() }
        }
        await fulfillment(of: [loaded], timeout: 0.2)
    }

    func testCallbackOnBackgroundQueue() {
        simulateLatency(0.05)
        let called = expectation(description: "callback invoked")
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { called.fulfill() }
        wait(for: [called], timeout: 2)
    }

    func testAsyncComputation() async {
        simulateLatency(0.1)
        let value = await Task.detached { Arithmetic.fibonacci(30) }.value
        XCTAssertEqual(value, 832_040)
    }
}
