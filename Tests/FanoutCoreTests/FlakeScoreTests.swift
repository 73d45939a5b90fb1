import Foundation
import Testing
@testable import FanoutCore

/// The interval a flake score carries: Wilson's score interval of failures per attempt.
@Suite struct FlakeScoreTests {
    func close(_ a: ClosedRange<Double>, _ low: Double, _ high: Double) -> Bool {
        abs(a.lowerBound - low) < 0.0005 && abs(a.upperBound - high) < 0.0005
    }

    @Test func knownIntervals() {
        // Values from the formula by hand (z = 1.96), and the textbook 1 in 100.
        #expect(close(FlakeScore.wilson(0, of: 10), 0, 0.2775))
        #expect(close(FlakeScore.wilson(5, of: 10), 0.2366, 0.7634))
        #expect(close(FlakeScore.wilson(10, of: 10), 0.7225, 1))
        #expect(close(FlakeScore.wilson(1, of: 100), 0.0018, 0.0545))
        #expect(FlakeScore.wilson(0, of: 0) == 0...1, "nothing known")
        #expect(FlakeScore.wilson(3, of: 2) == FlakeScore.wilson(2, of: 2), "more events than trials are capped")
    }

    @Test func theRateAndIntervalOfAScore() {
        let s = FlakeScore(attempts: 40, failures: 4, runs: 38, flakyRuns: 2, mixedProducts: 1)
        #expect(s.rate == 0.1)
        #expect(s.interval.contains(0.1) && s.interval.lowerBound > 0.03 && s.interval.upperBound < 0.24, "\(s.interval)")
        #expect(FlakeScore(attempts: 0, failures: 0, runs: 0, flakyRuns: 0, mixedProducts: 0).rate == 0)
    }

    /// What the interval promises: over many simulated histories of 40 attempts, it holds the true failure
    /// probability about 95 % of the time, at the rates flaky tests have (seeded: the same draws every run).
    @Test(arguments: [0.02, 0.1, 0.3, 0.5])
    func theIntervalHoldsTheTrueRateAbout95PercentOfTheTime(p: Double) {
        var rng = SeededRandom(state: 42)
        let trials = 4000, attempts = 40
        var held = 0
        for _ in 0..<trials {
            var failures = 0
            for _ in 0..<attempts where rng.unit() < p { failures += 1 }
            if FlakeScore.wilson(failures, of: attempts).contains(p) { held += 1 }
        }
        let coverage = Double(held) / Double(trials)
        #expect(coverage >= 0.92 && coverage <= 0.995, "p = \(p): \(coverage)")
    }
}
