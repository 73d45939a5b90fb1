import Testing

// One serialized suite: its tests take turns in their process, as XCTest's methods do (two suites would run at
// once in one process, and share the worker's database).

@Suite(.serialized) struct LedgerSuite {
    @Test func records() throws {
        #expect(try Database.fillAndCount(rows: 7, test: "LedgerSuite/records()") == 7)
    }
    @Test func balances() throws {
        #expect(try Database.fillAndCount(rows: 12, test: "LedgerSuite/balances()") == 12)
    }
    @Test func closes() throws {
        #expect(try Database.fillAndCount(rows: 17, test: "LedgerSuite/closes()") == 17)
    }
    @Test func reopens() throws {
        #expect(try Database.fillAndCount(rows: 22, test: "LedgerSuite/reopens()") == 22)
    }
    @Test func audits() throws {
        #expect(try Database.fillAndCount(rows: 27, test: "LedgerSuite/audits()") == 27)
    }
    @Test func archives() throws {
        #expect(try Database.fillAndCount(rows: 32, test: "LedgerSuite/archives()") == 32)
    }
}
