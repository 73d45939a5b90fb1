import CLibSSH2
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One known_hosts file, checked through libssh2's knownhost API (OpenSSH format, hashed `|1|` entries,
/// `[host]:port` entries). Confined to the I/O thread, and only alive while its session is (libssh2 allocates
/// through the session).
///
/// The file is fed to libssh2 line by line: libssh2_knownhost_readfile gives up on the whole file at the first line
/// it cannot parse (a key type it does not know, such as sk-ssh-ed25519@openssh.com); we skip such lines instead.
final class KnownHosts {
    let path: String
    let fileExists: Bool
    private let session: OpaquePointer
    private let collection: OpaquePointer
    /// Lines libssh2 accepted: (1-based line number, text).
    private var entries: [(number: Int, text: String)] = []
    /// Keys (base64) of `@revoked` lines.
    private var revokedKeys: Set<String> = []
    /// Line numbers libssh2 could not parse (unsupported key types, garbage); reported in notes.
    private(set) var skippedLines: [Int] = []

    init(path: String, session: OpaquePointer) throws(SSHError) {
        self.path = path
        self.session = session
        guard let collection = libssh2_knownhost_init(session) else {
            throw .knownHostsFailed(path: path, reason: "libssh2_knownhost_init failed (out of memory?)")
        }
        self.collection = collection
        switch LocalFiles.read(path) {
        case .success(let bytes):
            fileExists = true
            load(String(decoding: bytes, as: UTF8.self))
        case .failure(let error) where error.code == ENOENT:
            fileExists = false
        case .failure(let error):
            libssh2_knownhost_free(collection)
            throw .knownHostsFailed(path: path, reason: "cannot read it: \(error.text)")
        }
    }

    deinit {
        libssh2_knownhost_free(collection)
    }

    private func load(_ text: String) {
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(rawLine.trimmingCharacters(in: " \t\r"))
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("@") {
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                if fields.first == "@revoked", fields.count >= 4 {
                    revokedKeys.insert(String(fields[3]))
                }
                continue // @cert-authority: certificates are not supported by libssh2 1.10
            }
            if add(line, to: collection) {
                entries.append((index + 1, line))
            } else {
                skippedLines.append(index + 1)
            }
        }
    }

    private func add(_ line: String, to target: OpaquePointer) -> Bool {
        libssh2_knownhost_readline(target, line, line.utf8.count, LIBSSH2_KNOWNHOST_FILE_OPENSSH) == 0
    }

    /// The key types known_hosts holds for this host (`[host]:port` or plain `host`), in our preference order.
    /// libssh2 matches a key type only against entries of the same type and reports MISMATCH when such an entry
    /// exists with another key: probing with a dummy key per type reveals the types, hashed entries included.
    func knownKeyTypes(host: String, port: Int) -> [HostKeyType] {
        let dummy: [UInt8] = [0]
        return HostKeyType.preferenceForUnknownHosts.filter { type in
            check(collection, host: host, port: port, key: dummy, type: type) == LIBSSH2_KNOWNHOST_CHECK_MISMATCH
        } + (check(collection, host: host, port: port, key: dummy, type: .dss) == LIBSSH2_KNOWNHOST_CHECK_MISMATCH
            ? [.dss] : [])
    }

    /// What the known-hosts file says of a host's key.
    enum Lookup: Equatable {
        case match
        case mismatch(line: Int?)
        case notFound
        case revoked
        case failure(String)
    }

    func verify(host: String, port: Int, key: [UInt8], type: HostKeyType) -> Lookup {
        if revokedKeys.contains(Base64.encode(key)) { return .revoked }
        switch check(collection, host: host, port: port, key: key, type: type) {
        case LIBSSH2_KNOWNHOST_CHECK_MATCH:
            return .match
        case LIBSSH2_KNOWNHOST_CHECK_MISMATCH:
            return .mismatch(line: offendingLine(host: host, port: port, key: key, type: type))
        case LIBSSH2_KNOWNHOST_CHECK_NOTFOUND:
            return .notFound
        default:
            var message: UnsafeMutablePointer<CChar>?
            var length: Int32 = 0
            libssh2_session_last_error(session, &message, &length, 0)
            return .failure(message.map { String(cString: $0) } ?? "libssh2_knownhost_checkp failed")
        }
    }

    /// The first line that holds another key of this type for the host (checked one line at a time).
    private func offendingLine(host: String, port: Int, key: [UInt8], type: HostKeyType) -> Int? {
        for entry in entries {
            guard let single = libssh2_knownhost_init(session) else { return nil }
            defer { libssh2_knownhost_free(single) }
            if add(entry.text, to: single),
               check(single, host: host, port: port, key: key, type: type) == LIBSSH2_KNOWNHOST_CHECK_MISMATCH {
                return entry.number
            }
        }
        return nil
    }

    private func check(_ target: OpaquePointer, host: String, port: Int, key: [UInt8], type: HostKeyType) -> Int32 {
        let mask = LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | type.knownHostMask
        return key.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                libssh2_knownhost_checkp(target, host, Int32(port), chars.baseAddress, chars.count, mask, nil)
            }
        }
    }

    /// The line OpenSSH would write for this host and key.
    static func line(for endpoint: SSHEndpoint, type: HostKeyType, key: [UInt8]) -> String {
        "\(endpoint.knownHostsName) \(type.name) \(Base64.encode(key))"
    }

    func append(_ line: String) throws(SSHError) {
        if case let .failure(error) = LocalFiles.appendLine(line, to: path) {
            throw .knownHostsFailed(path: path, reason: "cannot record the new host key: \(error.text)")
        }
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> Substring {
        var s = self[...]
        while let c = s.first, set.contains(c) { s = s.dropFirst() }
        while let c = s.last, set.contains(c) { s = s.dropLast() }
        return s
    }
}
