/// Retry/backoff policy and a circuit breaker (pure logic; time is passed in).
public struct RetryPolicy: Sendable {
    public let maxAttempts: Int
    public let baseDelay: Double
    public let maxDelay: Double

    public init(maxAttempts: Int, baseDelay: Double, maxDelay: Double) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// Exponential backoff delay before attempt `n` (1-based; attempt 1 has no delay).
    public func delay(beforeAttempt n: Int) -> Double {
        guard n > 1 else { return 0 }
        var d = baseDelay
        for _ in 2..<n { d *= 2 }
        return min(d, maxDelay)
    }

    /// Runs `operation` until it succeeds or attempts run out; `sleep` receives each delay.
    public func run<T>(sleep: (Double) -> Void = { _ in },
                       _ operation: (Int) throws -> T) throws -> T {
        var attempt = 1
        while true {
            do { return try operation(attempt) } catch {
                guard attempt < maxAttempts else { throw error }
                attempt += 1
                sleep(delay(beforeAttempt: attempt))
            }
        }
    }
}

public final class CircuitBreaker {
    public enum State: Equatable { case closed, open(since: Double), halfOpen }
    public private(set) var state: State = .closed
    private var failures = 0
    public let threshold: Int
    public let coolDown: Double

    public init(threshold: Int, coolDown: Double) {
        self.threshold = threshold
        self.coolDown = coolDown
    }

    public func allowsRequest(at now: Double) -> Bool {
        switch state {
        case .closed, .halfOpen: return true
        case .open(let since):
            if now - since >= coolDown { state = .halfOpen; return true }
            return false
        }
    }

    public func recordSuccess() { failures = 0; state = .closed }

    public func recordFailure(at now: Double) {
        failures += 1
        if state == .halfOpen || failures >= threshold { state = .open(since: now) }
    }
}
