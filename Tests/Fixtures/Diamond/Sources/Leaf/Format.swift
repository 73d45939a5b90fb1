/// A second file of the leaf, so a change to either is seen.
public func leafLabel(_ x: Int) -> String { "leaf-\(x)" }
