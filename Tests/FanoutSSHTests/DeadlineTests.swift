@testable import FanoutSSH
import Testing

/// The one piece of clock arithmetic every timeout in the module goes through.
@Suite(.timeLimit(.minutes(1))) struct DeadlineTests {
    @Test func dueAtTheGivenInstantAndNotBefore() {
        let deadline = Deadline(after: 1.5, now: 10_000_000_000)
        #expect(deadline.nanos == 11_500_000_000)
        #expect(!deadline.hasPassed(now: 11_499_999_999))
        #expect(deadline.hasPassed(now: 11_500_000_000))
    }

    @Test func pollTimeoutsRoundUpAndAreCapped() {
        let deadline = Deadline(after: 0.25, now: 0)
        #expect(deadline.pollMilliseconds(now: 0, atMost: 1000) == 251)
        #expect(deadline.pollMilliseconds(now: 249_999_999, atMost: 1000) == 1)
        #expect(deadline.pollMilliseconds(now: 250_000_000, atMost: 1000) == 0)
        #expect(deadline.pollMilliseconds(now: 0, atMost: 100) == 100)
        #expect(Deadline(after: 5, now: 0) < Deadline(after: 6, now: 0))
    }

    @Test func nonsenseDurationsNeitherTrapNorWrap() {
        #expect(Deadline(after: -3, now: 42).nanos == 42)
        #expect(Deadline(after: .nan, now: 42).nanos == 42)
        #expect(Deadline(after: 1e30, now: 42).nanos == .max)
        #expect(Deadline(after: 1, now: .max - 10).nanos == .max)
        #expect(secondsElapsed(from: 1_000_000_000, to: 3_500_000_000) == 2.5)
    }
}
