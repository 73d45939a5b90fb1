import XCTest

// Eight classes of three tests: each empties the shared table, fills it, waits and counts it.

final class OrdersTests: XCTestCase {
    func testInsert() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 3, test: "OrdersTests/testInsert"), 3)
    }
    func testUpdate() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 13, test: "OrdersTests/testUpdate"), 13)
    }
    func testDelete() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 23, test: "OrdersTests/testDelete"), 23)
    }
}

final class CustomersTests: XCTestCase {
    func testInsert() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 4, test: "CustomersTests/testInsert"), 4)
    }
    func testUpdate() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 14, test: "CustomersTests/testUpdate"), 14)
    }
    func testDelete() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 24, test: "CustomersTests/testDelete"), 24)
    }
}

final class InvoicesTests: XCTestCase {
    func testInsert() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 5, test: "InvoicesTests/testInsert"), 5)
    }
    func testUpdate() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 15, test: "InvoicesTests/testUpdate"), 15)
    }
    func testDelete() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 25, test: "InvoicesTests/testDelete"), 25)
    }
}

final class PaymentsTests: XCTestCase {
    func testInsert() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 6, test: "PaymentsTests/testInsert"), 6)
    }
    func testUpdate() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 16, test: "PaymentsTests/testUpdate"), 16)
    }
    func testDelete() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 26, test: "PaymentsTests/testDelete"), 26)
    }
}

final class ShipmentsTests: XCTestCase {
    func testInsert() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 7, test: "ShipmentsTests/testInsert"), 7)
    }
    func testUpdate() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 17, test: "ShipmentsTests/testUpdate"), 17)
    }
    func testDelete() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 27, test: "ShipmentsTests/testDelete"), 27)
    }
}

final class ProductsTests: XCTestCase {
    func testInsert() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 8, test: "ProductsTests/testInsert"), 8)
    }
    func testUpdate() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 18, test: "ProductsTests/testUpdate"), 18)
    }
    func testDelete() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 28, test: "ProductsTests/testDelete"), 28)
    }
}

final class ReviewsTests: XCTestCase {
    func testInsert() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 9, test: "ReviewsTests/testInsert"), 9)
    }
    func testUpdate() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 19, test: "ReviewsTests/testUpdate"), 19)
    }
    func testDelete() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 29, test: "ReviewsTests/testDelete"), 29)
    }
}

final class RefundsTests: XCTestCase {
    func testInsert() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 10, test: "RefundsTests/testInsert"), 10)
    }
    func testUpdate() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 20, test: "RefundsTests/testUpdate"), 20)
    }
    func testDelete() throws {
        XCTAssertEqual(try Database.fillAndCount(rows: 30, test: "RefundsTests/testDelete"), 30)
    }
}
