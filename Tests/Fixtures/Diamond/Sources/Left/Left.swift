import Leaf

public enum Left {
    public static func quadruple(_ x: Int) -> Int { Leaf.double(Leaf.double(x)) }
}
