import struct Foundation.Date

/// ISO-8601 timestamps in UTC, written and read by hand. Foundation's styles truncate instead of round
/// (`.123` comes back as `.122`), so a report would not survive a round trip; this keeps milliseconds exactly:
/// any date that is a whole number of milliseconds since 1970 reads back equal to the one written.
/// Shared by report.json, junit.xml and the portable history export (FanoutHistory).
public enum ISO8601Timestamp {
    /// `2024-05-01T12:00:00.250Z`; with `milliseconds: false`, `2024-05-01T12:00:00Z`; with `zone: false` the
    /// trailing `Z` is left out (JUnit's schema wants a timestamp without a zone; it is still UTC).
    public static func string(from date: Date, milliseconds: Bool = true, zone: Bool = true) -> String {
        let seconds = date.timeIntervalSince1970
        // Out-of-range dates (far past/future, non-finite) are clamped rather than trapping on the Int conversion.
        let milliseconds1970 = seconds.isFinite ? (seconds * 1000).rounded() : 0
        let totalMs = Int64(max(-62_135_596_800_000, min(253_402_300_799_999, milliseconds1970)))
        let wholeSeconds = floorDiv(totalMs, 1000)
        let ms = Int(totalMs - wholeSeconds * 1000)
        let days = floorDiv(wholeSeconds, 86_400)
        let secondOfDay = Int(wholeSeconds - days * 86_400)
        let (y, m, d) = civil(fromDays: days)
        var text = "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T"
            + "\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if milliseconds { text += ".\(pad(ms, 3))" }
        if zone { text += "Z" }
        return text
    }

    /// Reads `YYYY-MM-DDTHH:MM:SS[.fraction][Z|±HH:MM]` (no zone means UTC). Fractions finer than a millisecond are
    /// rounded to one.
    public static func date(from text: String) -> Date? {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.number(4), scanner.skip("-"), let month = scanner.number(2), scanner.skip("-"),
              let day = scanner.number(2), scanner.skip("T") || scanner.skip("t") || scanner.skip(" "),
              let hour = scanner.number(2), scanner.skip(":"), let minute = scanner.number(2), scanner.skip(":"),
              let second = scanner.number(2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var ms: Int64 = 0
        if scanner.skip(".") || scanner.skip(",") {
            let digits = scanner.digits()
            guard !digits.isEmpty else { return nil }
            // Milliseconds from the first four digits, rounded half up on the fourth.
            let padded = Array((digits + [0, 0, 0, 0]).prefix(4))
            ms = Int64(padded[0] * 100 + padded[1] * 10 + padded[2]) + (padded[3] >= 5 ? 1 : 0)
        }
        var offsetSeconds: Int64 = 0
        if scanner.skip("Z") || scanner.skip("z") {
        } else if let sign = scanner.sign() {
            guard let oh = scanner.number(2) else { return nil }
            _ = scanner.skip(":")
            let om = scanner.number(2) ?? 0
            offsetSeconds = Int64(sign * (oh * 3600 + om * 60))
        }
        guard scanner.atEnd else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - offsetSeconds
        // Division of an exact integer gives the double nearest to the decimal value, the same double a literal
        // `1_700_000_000.123` gives: this is what makes millisecond dates round-trip exactly.
        return Date(timeIntervalSince1970: Double(seconds * 1000 + ms) / 1000)
    }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    private static func pad(_ value: some BinaryInteger, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    // Howard Hinnant's civil-date algorithms (proleptic Gregorian), exact for every day of years 0...9999.
    private static func civil(fromDays z0: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = z0 + 719_468
        let era = floorDiv(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = floorDiv(y, 400)
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// A cursor over ASCII bytes; anything unexpected makes the whole parse fail.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func skip(_ character: Character) -> Bool {
            guard index < bytes.count, let ascii = character.asciiValue, bytes[index] == ascii else { return false }
            index += 1
            return true
        }

        mutating func number(_ width: Int) -> Int? {
            guard index + width <= bytes.count else { return nil }
            var value = 0
            for b in bytes[index..<index + width] {
                guard (48...57).contains(b) else { return nil }
                value = value * 10 + Int(b - 48)
            }
            index += width
            return value
        }

        mutating func digits() -> [Int] {
            var out: [Int] = []
            while index < bytes.count, (48...57).contains(bytes[index]) {
                out.append(Int(bytes[index] - 48))
                index += 1
            }
            return out
        }

        mutating func sign() -> Int? {
            if skip("+") { return 1 }
            if skip("-") { return -1 }
            return nil
        }
    }
}
