import Foundation

/// The JSON conventions of every file Fanout writes for tools (report.json, the history export): dates as ISO-8601
/// UTC with milliseconds (``ISO8601Timestamp``, exact to the millisecond both ways), and non-finite numbers as the
/// strings `"NaN"`, `"+Infinity"`, `"-Infinity"` so one odd value never makes a file unwritable.
public enum JSONConventions {
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISO8601Timestamp.string(from: date))
        }
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = ISO8601Timestamp.date(from: text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "'\(text)' is not an ISO-8601 date like 2024-05-01T12:00:00.000Z")
            }
            return date
        }
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return decoder
    }

    /// `results[3].outcome: ...`: the place in the file, then what was wrong there.
    public static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            var text = ""
            for key in keys {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += (text.isEmpty ? "" : ".") + key.stringValue
                }
            }
            return text.isEmpty ? "top level" : text
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): expected \(type); \(context.debugDescription)"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): missing \(type) value"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): required field is missing"
        case .dataCorrupted(let context):
            let underlying = context.underlyingError.map { " (\($0.localizedDescription))" } ?? ""
            return "\(path(context.codingPath)): \(context.debugDescription)\(underlying)"
        @unknown default:
            return "\(error)"
        }
    }


    /// `no such file`, `permission denied`... rather than Foundation's wordy descriptions.
    public static func describeIOError(_ error: any Error) -> String {
        let ns = error as NSError
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if ns.domain == NSCocoaErrorDomain, ns.code == NSFileReadNoSuchFileError { return "no such file" }
        return ns.localizedDescription
    }
}
