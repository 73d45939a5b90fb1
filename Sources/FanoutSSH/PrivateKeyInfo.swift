/// What we can learn about a private key file without its passphrase: its public key type and whether it is
/// encrypted. Used to explain failures (RSA keys cannot work with libssh2 1.10 against OpenSSH >= 8.8; an encrypted
/// key without a passphrase) rather than to decide anything up front.
struct PrivateKeyInfo: Equatable {
    /// "ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa", ... or nil when the format does not tell.
    var keyType: String?
    var isEncrypted: Bool?

    var isRSA: Bool { keyType == "ssh-rsa" }

    enum InspectError: Error {
        case unreadable(String)
    }

    static func inspect(path: String) -> Result<PrivateKeyInfo, InspectError> {
        switch LocalFiles.read(path, limit: 1 << 20) {
        case .failure(let error):
            return .failure(.unreadable(error.text))
        case .success(let bytes):
            var info = inspect(text: String(decoding: bytes, as: UTF8.self))
            if info.keyType == nil, case let .success(pub) = LocalFiles.read(path + ".pub", limit: 1 << 16) {
                info.keyType = String(decoding: pub, as: UTF8.self).split(separator: " ").first.map(String.init)
            }
            return .success(info)
        }
    }

    static func inspect(text: String) -> PrivateKeyInfo {
        if let body = pemBody(text, label: "OPENSSH PRIVATE KEY") {
            return openSSHKeyInfo(body) ?? PrivateKeyInfo(keyType: nil, isEncrypted: nil)
        }
        if pemBody(text, label: "RSA PRIVATE KEY") != nil {
            return PrivateKeyInfo(keyType: "ssh-rsa", isEncrypted: text.contains("ENCRYPTED"))
        }
        if pemBody(text, label: "EC PRIVATE KEY") != nil {
            return PrivateKeyInfo(keyType: "ecdsa", isEncrypted: text.contains("ENCRYPTED"))
        }
        if pemBody(text, label: "DSA PRIVATE KEY") != nil {
            return PrivateKeyInfo(keyType: "ssh-dss", isEncrypted: text.contains("ENCRYPTED"))
        }
        if pemBody(text, label: "ENCRYPTED PRIVATE KEY") != nil {
            return PrivateKeyInfo(keyType: nil, isEncrypted: true)
        }
        return PrivateKeyInfo(keyType: nil, isEncrypted: nil)
    }

    /// openssh-key-v1: magic, string cipher, string kdf, string kdfoptions, uint32 count, string publickey, ...
    /// The public part is never encrypted.
    private static func openSSHKeyInfo(_ body: [UInt8]) -> PrivateKeyInfo? {
        let magic = Array("openssh-key-v1".utf8) + [0]
        guard body.count > magic.count, Array(body[0..<magic.count]) == magic else { return nil }
        var reader = SSHWireReader(body, offset: magic.count)
        guard let cipher = reader.string(), reader.string() != nil, reader.string() != nil,
              let count = reader.uint32(), count >= 1, let publicKey = reader.string() else { return nil }
        var keyReader = SSHWireReader(publicKey)
        let type = keyReader.string().map { String(decoding: $0, as: UTF8.self) }
        return PrivateKeyInfo(keyType: type, isEncrypted: String(decoding: cipher, as: UTF8.self) != "none")
    }

    private static func pemBody(_ text: String, label: String) -> [UInt8]? {
        let begin = "-----BEGIN \(label)-----"
        let end = "-----END \(label)-----"
        guard let start = text.firstRange(of: begin), let stop = text.firstRange(of: end), start.upperBound <= stop.lowerBound
        else { return nil }
        // Skip PEM headers (Proc-Type, DEK-Info) if any: base64 of the body only.
        let lines = text[start.upperBound..<stop.lowerBound].split(separator: "\n").filter { !$0.contains(":") }
        return Base64.decode(lines.joined().utf8)
    }

    /// Type of a public key blob (as ssh-agent lists them): its first wire string.
    static func keyType(ofPublicKeyBlob blob: [UInt8]) -> String? {
        var reader = SSHWireReader(blob)
        return reader.string().map { String(decoding: $0, as: UTF8.self) }
    }
}
