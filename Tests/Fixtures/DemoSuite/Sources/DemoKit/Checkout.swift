/// Shopping-cart pricing with discount rules and an inventory.
public struct Product: Hashable, Sendable {
    public let sku: String
    public let priceCents: Int
    public init(sku: String, priceCents: Int) {
        self.sku = sku
        self.priceCents = priceCents
    }
}

public enum DiscountRule: Sendable, Equatable {
    case percentOff(Int)              // on the whole subtotal
    case buyNGetOneFree(sku: String, n: Int)
    case flatOffOver(thresholdCents: Int, offCents: Int)
}

public struct Cart: Sendable {
    public private(set) var lines: [Product: Int] = [:]
    public init() {}

    public mutating func add(_ p: Product, quantity: Int = 1) {
        precondition(quantity > 0)
        lines[p, default: 0] += quantity
    }

    public mutating func remove(_ p: Product) { lines[p] = nil }

    public var itemCount: Int { lines.values.reduce(0, +) }
    public var subtotalCents: Int { lines.reduce(0) { $0 + $1.key.priceCents * $1.value } }

    public func totalCents(applying rules: [DiscountRule]) -> Int {
        var total = subtotalCents
        for rule in rules {
            switch rule {
            case .buyNGetOneFree(let sku, let n):
                if let (p, q) = lines.first(where: { $0.key.sku == sku }) {
                    total -= (q / (n + 1)) * p.priceCents
                }
            case .percentOff(let pct):
                total -= total * pct / 100
            case .flatOffOver(let threshold, let off):
                if total >= threshold { total -= off }
            }
        }
        return max(total, 0)
    }
}

public final class Inventory {
    public enum InventoryError: Error, Equatable { case insufficientStock(sku: String, available: Int) }
    private var stock: [String: Int] = [:]
    public init() {}

    public func restock(_ sku: String, _ quantity: Int) { stock[sku, default: 0] += quantity }
    public func available(_ sku: String) -> Int { stock[sku] ?? 0 }

    /// Reserves everything in the cart, all or nothing.
    public func reserve(_ cart: Cart) throws {
        for (p, q) in cart.lines where available(p.sku) < q {
            throw InventoryError.insufficientStock(sku: p.sku, available: available(p.sku))
        }
        for (p, q) in cart.lines { stock[p.sku]! -= q }
    }
}
