/// Counts characters: what Right uses of another package.
public func tally(_ text: String) -> Int { text.count }
