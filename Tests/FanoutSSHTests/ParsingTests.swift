@testable import FanoutSSH
import Testing

/// Pieces that need no server.
@Suite(.timeLimit(.minutes(10))) struct ParsingTests {
    @Test func base64RoundTripAndUnpaddedFingerprints() {
        for length in 0..<10 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64.decode(Base64.encode(bytes).utf8) == bytes)
        }
        #expect(Base64.encode(Array("foobar".utf8)) == "Zm9vYmFy")
        #expect(Base64.encode(Array("fooba".utf8)) == "Zm9vYmE=")
        #expect(Base64.encode(Array("fooba".utf8), padding: false) == "Zm9vYmE")
        #expect(Base64.decode("Zm9v!".utf8) == nil)
    }

    @Test func openSSHPrivateKeyTypeAndEncryption() {
        // `ssh-keygen -t ed25519 -N ''` output (a throwaway key made for this test).
        let plain = """
            -----BEGIN OPENSSH PRIVATE KEY-----
            b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
            QyNTUxOQAAACBhqbqFiuxSdSaUYdIAkZ5Tq5i35rYdvh2S/PDCxrc6sAAAAJCOMmO8jjJj
            vAAAAAtzc2gtZWQyNTUxOQAAACBhqbqFiuxSdSaUYdIAkZ5Tq5i35rYdvh2S/PDCxrc6sA
            AAAEDhcZ/6CHrQ7lH8TZ5SNVwwLIG3Vl4bQqaEnz8xfvGqNWGpuoWK7FJ1JpRh0gCRnlOr
            mLfmth2+HZL88MLGtzqwAAAACXRlc3RAaG9zdAECAwQ=
            -----END OPENSSH PRIVATE KEY-----
            """
        let info = PrivateKeyInfo.inspect(text: plain)
        #expect(info.keyType == "ssh-ed25519")
        #expect(info.isEncrypted == false)
        #expect(!info.isRSA)

        let pemRSA = "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n"
        #expect(PrivateKeyInfo.inspect(text: pemRSA).isRSA)
        #expect(PrivateKeyInfo.inspect(text: "garbage") == PrivateKeyInfo(keyType: nil, isEncrypted: nil))
    }

    @Test func knownHostsNames() {
        #expect(SSHEndpoint(host: "h", port: 22, user: "u").knownHostsName == "h")
        #expect(SSHEndpoint(host: "127.0.1.1", port: 2422, user: "u").knownHostsName == "[127.0.1.1]:2422")
        #expect(SSHEndpoint(host: "h", port: 2222, user: "u").description == "u@h:2222")
    }

    @Test func everyErrorSaysWhatAndHow() {
        let endpoint = SSHEndpoint(host: "10.0.0.1", port: 2222, user: "agent")
        let errors: [SSHError] = [
            .resolveFailed(endpoint, reason: "Name or service not known"),
            .connectFailed(endpoint, reason: "connection refused"),
            .connectTimedOut(endpoint, phase: "TCP connect", seconds: 5),
            .handshakeFailed(endpoint, reason: "x"),
            .knownHostsFailed(path: "/k", reason: "x"),
            .unknownHostKey(endpoint, fingerprint: "SHA256:abc", keyType: "ssh-ed25519", knownHostsPath: "/k",
                            lineToAdd: "[10.0.0.1]:2222 ssh-ed25519 AAAA"),
            .hostKeyChanged(endpoint, fingerprint: "SHA256:abc", keyType: "ssh-ed25519", knownHostsPath: "/k",
                            offendingLine: 3),
            .hostKeyRevoked(endpoint, fingerprint: "SHA256:abc", knownHostsPath: "/k"),
            .hostKeyTypeNotOffered(endpoint, knownTypes: ["ssh-ed25519"], knownHostsPath: "/k", reason: "x"),
            .keyFileUnusable(path: "/id", reason: "x"),
            .agentUnavailable(socketPath: nil, reason: "x"),
            .authenticationFailed(endpoint, method: "public key", reason: "x"),
            .rsaKeyRefused(endpoint, keyDescription: "/id_rsa"),
            .channelFailed(endpoint, command: "true", reason: "x"),
            .connectionLost(endpoint, reason: "x"),
            .connectionClosed(endpoint),
            .commandTimedOut(endpoint, command: "sleep 9", seconds: 1),
            .sftpFailed(endpoint, operation: "upload", path: "/p", reason: "x"),
            .localFileFailed(path: "/l", reason: "x"),
            .cancelled,
            .libssh2(endpoint, operation: "op", code: -1, message: "x"),
        ]
        for error in errors {
            #expect(error.description.count > 20, "\(error)")
        }
        #expect(errors[6].description.contains("line 3"))
        #expect(errors[12].description.contains("ssh-keygen -t ed25519"))
    }
}

/// known_hosts handling through libssh2, without a server (a session that never connects is enough for libssh2's
/// knownhost API).
@Suite(.timeLimit(.minutes(10))) struct KnownHostsTests {
    @Test func keyTypesKnownForAHostIncludeHashedAndPortEntries() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/known_hosts"
        // Real key blobs: an ed25519 and an ECDSA (nistp256) one, made with ssh-keygen for this test.
        let ed25519 = "AAAAC3NzaC1lZDI1NTE5AAAAIE4515hSMtXjn92z4vvqy+itKDiSQKA1Dsc89kUQ8NeP"
        let ecdsa = "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBPzz8buKBbGqRi5q+wlPfa5D2hS70G+JEqeWfz7cWk63"
            + "TAZb+gA/ara3R6xPrdaELn34LwmMTzRMEWBvdQtN+Rs="
        let content = """
            # comment
            [10.1.2.3]:2422 ssh-ed25519 \(ed25519)
            other.example ssh-ed25519 \(ed25519)
            """
        // The ECDSA entry hashed (|1|salt|HMAC-SHA1), as `ssh-keygen -H` writes it.
        let hashed = try KnownHostsProbe.hashLine(host: "[10.1.2.3]:2422", type: "ecdsa-sha2-nistp256", key: ecdsa)
        try (content + "\n" + hashed + "\n").write(toFile: path, atomically: true, encoding: .utf8)

        let types = try KnownHostsProbe.knownKeyTypes(path: path, host: "10.1.2.3", port: 2422)
        #expect(types == ["ssh-ed25519", "ecdsa-sha2-nistp256"])
        #expect(try KnownHostsProbe.knownKeyTypes(path: path, host: "10.1.2.3", port: 2423).isEmpty)
        #expect(try KnownHostsProbe.knownKeyTypes(path: path, host: "other.example", port: 22) == ["ssh-ed25519"])
        #expect(try KnownHostsProbe.knownKeyTypes(path: directory.path + "/missing", host: "h", port: 22).isEmpty)
    }
}
