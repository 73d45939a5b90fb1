import Foundation
import XCTest
import DemoKit

final class EndToEndCheckoutTests: XCTestCase {
    let apple = Product(sku: "apple", priceCents: 50)
    let bread = Product(sku: "bread", priceCents: 250)
    let wine = Product(sku: "wine", priceCents: 1_200)

    func testEmptyCartTotalsZero() {
        simulateLatency(1.083)
        XCTAssertEqual(Cart().totalCents(applying: [.percentOff(10)]), 0)
    }

    func testSimpleOrder() {
        simulateLatency(0.361)
        var cart = Cart()
        cart.add(apple, quantity: 4)
        cart.add(bread)
        XCTAssertEqual(cart.totalCents(applying: []), 450)
    }

    func testOrderWithPercentDiscount() {
        simulateLatency(0.722)
        var cart = Cart()
        cart.add(wine, quantity: 2)
        XCTAssertEqual(cart.totalCents(applying: [.percentOff(25)]), 1_800)
    }

    func testBuyThreeGetOneFree() {
        simulateLatency(1.806)
        var cart = Cart()
        cart.add(apple, quantity: 8)
        XCTAssertEqual(cart.totalCents(applying: [.buyNGetOneFree(sku: "apple", n: 3)]), 300)
    }

    func testReservationReducesInventory() throws {
        simulateLatency(0.361)
        let inventory = Inventory()
        inventory.restock("apple", 10)
        var cart = Cart()
        cart.add(apple, quantity: 3)
        try inventory.reserve(cart)
        XCTAssertEqual(inventory.available("apple"), 7)
    }

    func testReservationIsAllOrNothing() throws {
        simulateLatency(0.722)
        let inventory = Inventory()
        inventory.restock("apple", 10)
        inventory.restock("wine", 1)
        var cart = Cart()
        cart.add(apple, quantity: 2)
        cart.add(wine, quantity: 2)
        XCTAssertThrowsError(try inventory.reserve(cart))
        XCTAssertEqual(inventory.available("apple"), 10)
    }

    func testFullCheckoutFlow() throws {
        simulateLatency(1.444)
        let inventory = Inventory()
        inventory.restock("apple", 100)
        inventory.restock("wine", 5)
        var cart = Cart()
        cart.add(apple, quantity: 4)
        cart.add(wine)
        try inventory.reserve(cart)
        let total = cart.totalCents(applying: [
            .buyNGetOneFree(sku: "apple", n: 1),
            .percentOff(10),
            .flatOffOver(thresholdCents: 1_000, offCents: 100),
        ])
        XCTAssertEqual(total, 1_070)
        XCTAssertEqual(inventory.available("wine"), 4)
    }
}
