import Foundation
import XCTest
import DemoKit

final class CartTests: XCTestCase {
    let apple = Product(sku: "apple", priceCents: 50)
    let bread = Product(sku: "bread", priceCents: 250)
    let wine = Product(sku: "wine", priceCents: 1_200)

    func testAddIncreasesCount() {
        simulateLatency(0.1)
        var cart = Cart()
        cart.add(apple, quantity: 2)
        cart.add(apple)
        XCTAssertEqual(cart.itemCount, 3)
    }

    func testSubtotal() {
        simulateLatency(0.033)
        var cart = Cart()
        cart.add(apple, quantity: 3)
        cart.add(bread)
        XCTAssertEqual(cart.subtotalCents, 400)
    }

    func testRemove() {
        simulateLatency(0.067)
        var cart = Cart()
        cart.add(apple)
        cart.remove(apple)
        XCTAssertEqual(cart.itemCount, 0)
    }

    func testDistinctProductsAreSeparateLines() {
        simulateLatency(0.167)
        var cart = Cart()
        cart.add(apple)
        cart.add(bread)
        XCTAssertEqual(cart.lines.count, 2)
    }

    func testEmptyCartSubtotal() {
        simulateLatency(0.033)
        XCTAssertEqual(Cart().subtotalCents, 0)
    }
}
