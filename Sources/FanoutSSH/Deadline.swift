#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Monotonic time in nanoseconds: deadlines and timings must not jump with the wall clock (NTP, suspend).
func monotonicNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Seconds from `start` to `end` on the monotonic clock, for timings reported to the user.
func secondsElapsed(from start: UInt64, to end: UInt64 = monotonicNanos()) -> Double {
    Double(end &- start) / 1e9
}

/// A point on the monotonic clock by which something is due: a connect budget, a command's timeout, the next
/// keepalive. Callers pass `now` when they compare several deadlines against one reading of the clock.
struct Deadline: Sendable, Comparable {
    /// On the `monotonicNanos()` clock.
    let nanos: UInt64

    init(nanos: UInt64) {
        self.nanos = nanos
    }

    /// `seconds` after `now`. A negative (or NaN) duration is due at once; one too long for the clock saturates
    /// instead of trapping.
    init(after seconds: Double, now: UInt64 = monotonicNanos()) {
        let span: UInt64
        if !(seconds > 0) {
            span = 0
        } else if seconds * 1e9 >= Double(UInt64.max) {
            span = .max
        } else {
            span = UInt64(seconds * 1e9)
        }
        let (sum, overflow) = now.addingReportingOverflow(span)
        nanos = overflow ? .max : sum
    }

    func hasPassed(now: UInt64 = monotonicNanos()) -> Bool {
        now >= nanos
    }

    /// A poll() timeout that wakes at or just after the deadline (rounded up, so a wait never ends a millisecond
    /// early and then spins), 0 once passed, and never longer than `limit`.
    func pollMilliseconds(now: UInt64 = monotonicNanos(), atMost limit: Int32) -> Int32 {
        guard nanos > now else { return 0 }
        return Int32(min(UInt64(max(0, limit)), (nanos - now) / 1_000_000 + 1))
    }

    static func < (lhs: Deadline, rhs: Deadline) -> Bool {
        lhs.nanos < rhs.nanos
    }
}
