import Foundation
import XCTest
import DemoKit

final class InventoryTests: XCTestCase {
    func testRestockAccumulates() {
        simulateLatency(0.082)
        let inventory = Inventory()
        inventory.restock("a", 2)
        inventory.restock("a", 3)
        XCTAssertEqual(inventory.available("a"), 5)
    }

    func testUnknownSkuHasNoStock() {
        simulateLatency(0.027)
        XCTAssertEqual(Inventory().available("x"), 0)
    }

    func testInsufficientStockError() throws {
        simulateLatency(0.055)
        let inventory = Inventory()
        inventory.restock("apple", 1)
        var cart = Cart()
        cart.add(Product(sku: "apple", priceCents: 50), quantity: 2)
        XCTAssertThrowsError(try inventory.reserve(cart)) { error in
            XCTAssertEqual(error as? Inventory.InventoryError, .insufficientStock(sku: "apple", available: 1))
        }
    }

    func testExactStockCanBeReserved() throws {
        simulateLatency(0.136)
        let inventory = Inventory()
        inventory.restock("apple", 2)
        var cart = Cart()
        cart.add(Product(sku: "apple", priceCents: 50), quantity: 2)
        try inventory.reserve(cart)
        XCTAssertEqual(inventory.available("apple"), 0)
    }
}
