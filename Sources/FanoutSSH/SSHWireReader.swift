/// Reads SSH wire-format fields (RFC 4251 `string`, `uint32`) from a byte array.
struct SSHWireReader {
    private let bytes: [UInt8]
    private var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    mutating func uint32() -> UInt32? {
        guard offset + 4 <= bytes.count else { return nil }
        let v = bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        offset += 4
        return v
    }

    mutating func string() -> [UInt8]? {
        guard let n = uint32(), offset + Int(n) <= bytes.count else { return nil }
        defer { offset += Int(n) }
        return Array(bytes[offset..<offset + Int(n)])
    }
}
