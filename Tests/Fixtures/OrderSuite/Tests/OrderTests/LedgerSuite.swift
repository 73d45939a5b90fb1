import Testing

/// Swift Testing: a serialized suite whose last test expects the global ledger another of its tests fills.
@Suite(.serialized) struct LedgerSuite {
    @Test func aReadsNothing() { #expect(busyWork(6) >= 0) }
    @Test func bRecordsEntry() { ledger.append("entry") }
    @Test func cInnocent() { #expect(busyWork(7) >= 0) }
    @Test func zExpectsEmptyLedger() { #expect(ledger.isEmpty, "the ledger was filled by an earlier test") }
}
