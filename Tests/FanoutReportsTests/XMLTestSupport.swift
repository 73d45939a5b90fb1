import Foundation
import Testing
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads a JUnit document back the way a CI server would: a strict XMLParser pass decides well-formedness (libxml's
/// tree builder behind XMLDocument recovers from errors silently, so it cannot be the judge), then XMLDocument gives
/// XPath queries.
enum XMLTestSupport {
    struct NotWellFormed: Error, CustomStringConvertible {
        var description: String
    }

    static func parse(_ xml: String) throws -> XMLDocument {
        let parser = XMLParser(data: Data(xml.utf8))
        let ok = parser.parse()
        if !ok || parser.parserError != nil {
            throw NotWellFormed(description: "line \(parser.lineNumber), column \(parser.columnNumber): "
                + "\(String(describing: parser.parserError))")
        }
        return try XMLDocument(data: Data(xml.utf8), options: [])
    }

    static func elements(_ document: XMLDocument, _ xpath: String) throws -> [XMLElement] {
        try document.nodes(forXPath: xpath).compactMap { $0 as? XMLElement }
    }

    static func attribute(_ element: XMLElement?, _ name: String) -> String? {
        element?.attribute(forName: name)?.stringValue
    }
}
