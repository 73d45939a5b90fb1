import DemoKit
import Testing

@Suite("Checkout (Swift Testing)") struct CheckoutSuite {
    let apple = Product(sku: "apple", priceCents: 50)

    @Test func subtotal() {
        var cart = Cart()
        cart.add(apple, quantity: 3)
        #expect(cart.subtotalCents == 150)
    }

    @Test func reserveFailsWithoutStock() throws {
        var cart = Cart()
        cart.add(apple)
        #expect(throws: Inventory.InventoryError.self) {
            try Inventory().reserve(cart)
        }
    }
}
