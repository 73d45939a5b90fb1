import CLibSSH2
@testable import FanoutSSH
import Foundation

/// Drives FanoutSSH's KnownHosts with a libssh2 session that never connects.
enum KnownHostsProbe {
    static func knownKeyTypes(path: String, host: String, port: Int) throws -> [String] {
        _ = ensureLibSSH2Initialized()
        guard let session = fanout_session_init(nil) else { throw SSHError.cancelled }
        defer { libssh2_session_free(session) }
        let knownHosts = try KnownHosts(path: path, session: session)
        return knownHosts.knownKeyTypes(host: host, port: port).map(\.name)
    }

    /// A hashed known_hosts line, as `ssh-keygen -H` writes it.
    static func hashLine(host: String, type: String, key: String) throws -> String {
        let directory = TemporaryDirectory()
        let path = directory.path + "/plain"
        try "\(host) \(type) \(key)\n".write(toFile: path, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ssh-keygen")
        process.arguments = ["-H", "-f", path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
