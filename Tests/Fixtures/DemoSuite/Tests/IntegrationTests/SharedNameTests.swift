import Foundation
import XCTest
import DemoKit

/// A class with the same name exists in DemoKitTests (different methods except testRoundTrip).
final class SharedNameTests: XCTestCase {
    func testRoundTrip() throws {
        simulateLatency(0.095)
        let store = KeyValueStore()
        store.put("v", for: "k")
        XCTAssertEqual(try store.get("k"), "v")
    }

    func testSharedCheckout() {
        simulateLatency(0.032)
        var cart = Cart()
        cart.add(Product(sku: "x", priceCents: 10), quantity: 3)
        XCTAssertEqual(cart.subtotalCents, 30)
    }

    func testSharedQueue() {
        simulateLatency(0.064)
        var queue = JobQueue()
        queue.enqueue(Job(id: 7))
        XCTAssertEqual(queue.dequeue()?.id, 7)
    }

    func testSharedStore() {
        simulateLatency(0.159)
        let store = KeyValueStore()
        store.put("1", for: "shared")
        XCTAssertEqual(store.count, 1)
    }
}
