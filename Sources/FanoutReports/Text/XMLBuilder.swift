/// Writes an XML document element by element, escaping every name-value pair and text it is given, so a writer
/// cannot forget to escape one field. Indents elements for people reading the file; text content is never indented
/// or padded, since whitespace in it (logs, backtraces) is significant.
struct XMLBuilder {
    typealias Attributes = [(name: String, value: String)]

    private(set) var output = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    private var open: [String] = []

    /// Opens an element that will hold child elements; close it with `close()`.
    mutating func open(_ name: String, _ attributes: Attributes = []) {
        line("<\(name)\(Self.render(attributes))>")
        open.append(name)
    }

    mutating func close() {
        guard let name = open.popLast() else { return }
        line("</\(name)>")
    }

    /// An element with only text content, or an empty element when `text` is empty.
    mutating func element(_ name: String, _ attributes: Attributes = [], text: String = "") {
        if text.isEmpty {
            line("<\(name)\(Self.render(attributes))/>")
        } else {
            line("<\(name)\(Self.render(attributes))>\(XMLEscaping.text(text))</\(name)>")
        }
    }

    /// The finished document: every element still open is closed.
    mutating func finish() -> String {
        while !open.isEmpty { close() }
        return output
    }

    private mutating func line(_ text: String) {
        output += String(repeating: "  ", count: open.count) + text + "\n"
    }

    private static func render(_ attributes: Attributes) -> String {
        attributes.map { " \($0.name)=\"\(XMLEscaping.attribute($0.value))\"" }.joined()
    }
}
