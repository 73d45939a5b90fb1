import Foundation
import XCTest
import DemoKit

final class DiscountRulesTests: XCTestCase {
    let apple = Product(sku: "apple", priceCents: 50)
    let bread = Product(sku: "bread", priceCents: 250)
    let wine = Product(sku: "wine", priceCents: 1_200)

    func testPercentOff() {
        simulateLatency(0.409)
        var cart = Cart()
        cart.add(wine)
        XCTAssertEqual(cart.totalCents(applying: [.percentOff(50)]), 600)
    }

    func testFlatOffBelowThreshold() {
        simulateLatency(0.136)
        var cart = Cart()
        cart.add(apple)
        XCTAssertEqual(cart.totalCents(applying: [.flatOffOver(thresholdCents: 100, offCents: 30)]), 50)
    }

    func testFlatOffAboveThreshold() {
        simulateLatency(0.273)
        var cart = Cart()
        cart.add(apple, quantity: 4)
        XCTAssertEqual(cart.totalCents(applying: [.flatOffOver(thresholdCents: 100, offCents: 30)]), 170)
    }

    func testTotalNeverNegative() {
        simulateLatency(0.682)
        var cart = Cart()
        cart.add(apple)
        XCTAssertEqual(cart.totalCents(applying: [.flatOffOver(thresholdCents: 0, offCents: 500)]), 0)
    }
}
