import FanoutCore
@testable import FanoutSSH
import Testing

/// Fanout says a duration one way: the SSH layer (which imports nothing of ours) formats seconds as Core does.
@Suite struct SecondsFormatTests {
    @Test func theSSHLayerSaysSecondsAsCoreDoes() {
        for s in [0, 0.004, 0.25, 0.5, 1, 1.5, 9.99, 10, 12.34, 59.9, 119.4, 120, 125, 3599, 3600, 86_400, .infinity, .nan] {
            #expect(FanoutSSH.formatSeconds(s) == FanoutCore.formatSeconds(s), "\(s) s")
        }
    }
}
