/// The clock a run keeps time with: seconds since the run began, and sleeping. Whoever starts the run hands it a
/// clock (`ContinuousClock` in production; tests a virtual clock they advance), so every decision that is a matter
/// of time (stragglers, stealing, time limits, back-off, the ETA) can be driven without waiting.
public struct RunClock: Sendable {
    private let elapsed: @Sendable () -> Double
    private let sleeper: @Sendable (Duration) async throws -> Void

    /// Starts counting now, on `clock`.
    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let start = clock.now
        elapsed = { start.duration(to: clock.now).seconds }
        sleeper = { try await clock.sleep(for: $0) }
    }

    /// Seconds since the run began.
    public func now() -> Double { elapsed() }

    /// Sleeps on the run's clock; throws `CancellationError` when the task is cancelled.
    public func sleep(for duration: Duration) async throws { try await sleeper(duration) }

    /// Sleeps on the run's clock; returns early, without throwing, when the task is cancelled.
    public func pause(for duration: Duration) async { try? await sleeper(duration) }
}
