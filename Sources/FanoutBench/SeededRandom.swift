import Foundation

import FanoutCore

/// The bench's distributions over Core's seeded generator: the same seed gives the same suites and simulations.
extension SeededRandom {
    /// Standard normal (Box-Muller).
    mutating func normal() -> Double {
        let u1 = max(unit(), 1e-300), u2 = unit()
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }

    /// exp(mu + sigma·N(0,1)): the median is exp(mu).
    mutating func lognormal(mu: Double, sigma: Double) -> Double { exp(mu + sigma * normal()) }
}
