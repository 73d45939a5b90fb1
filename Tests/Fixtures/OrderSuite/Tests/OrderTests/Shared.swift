import Foundation

/// State the tests leak to each other on purpose (this is what an order-dependent suite looks like).
nonisolated(unsafe) var sharedCache: [String: String] = [:]
nonisolated(unsafe) var flagA = false
nonisolated(unsafe) var flagB = false
nonisolated(unsafe) var ledger: [String] = []

/// A folder of this process only (a random name: process ids are reused), removed when the process exits: a file
/// one test writes there is seen by the tests after it in the same process, and by no other process.
let processFolder: String = {
    let path = NSTemporaryDirectory() + "order-suite-" + UUID().uuidString
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: processFolder) }
    return path
}()

/// Filler work: a short computation so the innocent tests take a few milliseconds.
func busyWork(_ n: Int) -> Int {
    var x = n
    for i in 0..<20_000 { x = (x &* 31 &+ i) % 1_000_003 }
    return x
}
