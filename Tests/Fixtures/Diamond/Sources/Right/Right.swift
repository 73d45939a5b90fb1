import Leaf
import Tally

public enum Right {
    public static func label(_ x: Int) -> String { leafLabel(x) + "-right" + String(repeating: "!", count: tally("") ) }
}
