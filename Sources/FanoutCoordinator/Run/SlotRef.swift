/// A slot: one place on one agent where one test process runs at a time.
struct SlotRef: Sendable, Hashable {
    var agent: String
    var index: Int
}
