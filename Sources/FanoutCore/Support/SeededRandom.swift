/// A small, fast, seedable generator (SplitMix64: Steele, Lea, Flood 2014). The same seed gives the same sequence on
/// every machine and toolchain, which `SystemRandomNumberGenerator` cannot promise: generated bench suites,
/// simulations, fuzzing and randomized tests replay from their seed.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// The generator for `seed` (its state starts one step past the seed, so seed 0 does not start at state 0).
    public init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }

    /// The generator whose internal state is `state`: for sequences recorded by the fuzzer, which seeded it so.
    public init(state: UInt64) { self.state = state }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// Uniform in [low, high).
    public mutating func uniform(_ low: Double, _ high: Double) -> Double { low + (high - low) * unit() }
}
