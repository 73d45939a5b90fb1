public enum Words {
    /// `hello` → `HELLO!`
    public static func shout(_ text: String) -> String { text.uppercased() + "!" }
}
