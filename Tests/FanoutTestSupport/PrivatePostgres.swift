import FanoutAgents
import FanoutCore
import Foundation
import Synchronization

/// A private PostgreSQL server for the tests: its own data folder, a temporary port on 127.0.0.1, TLS with a CA made
/// for it, never a system service. Started by PID, stopped by PID (`stop()`, and at the latest when the test process
/// exits). PostgreSQL refuses to run as root: as root, the server runs as `nobody`.
///
/// Roles: `fanout` (the superuser, for set-up), `queue_user` (a password, owns the database `queue`: what a CI job
/// gets), `tls_user` (the same, but its pg_hba.conf rule accepts it over TLS only), `wrong_user` (whose password in
/// `passwordFile` is wrong). The tests give passwords as a user would, in a password file (`PGPASSFILE`).
public final class PrivatePostgres: Sendable {
    public let port: Int
    public let directory: String
    public let pid: Int32
    /// The CA that signed the server's certificate (for `sslrootcert`).
    public let caCertificate: String
    public static let queuePassword = "queue-secret-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    public static let tlsPassword = "tls-secret-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    private let bin: String
    private let stopped = Mutex(false)

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    private init(port: Int, directory: String, pid: Int32, caCertificate: String, bin: String) {
        self.port = port
        self.directory = directory
        self.pid = pid
        self.caCertificate = caCertificate
        self.bin = bin
    }

    /// The folder of PostgreSQL's server programs (initdb, postgres, pg_isready, psql), or nil.
    public static var binaries: String? {
        let fm = FileManager.default
        let versions = ((try? fm.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).sorted { $0.compare($1, options: .numeric) == .orderedDescending }
        return versions.map { "/usr/lib/postgresql/\($0)/bin" }.first { fm.isExecutableFile(atPath: $0 + "/postgres") }
    }

    /// A URL for `user` on the database `queue`, without a password (give it in PGPASSWORD).
    public func url(user: String = "queue_user", tls: String = "disable") -> String {
        var url = "postgres://\(user)@127.0.0.1:\(port)/queue?sslmode=\(tls)"
        if tls.hasPrefix("verify") { url += "&sslrootcert=\(caCertificate)" }
        return url
    }

    public static func start() async throws -> PrivatePostgres {
        guard let bin = binaries else {
            throw Failure(description: "PostgreSQL's server is not installed (/usr/lib/postgresql/*/bin/postgres): run scripts/setup.sh")
        }
        sweepOrphans()
        let dir = NSTemporaryDirectory() + "fanout-postgres-" + UUID().uuidString.prefix(8)
        let asRoot = getuid() == 0
        try FileManager.default.createDirectory(atPath: dir + "/socket", withIntermediateDirectories: true)
        try String(getpid()).write(toFile: dir + "/owner", atomically: true, encoding: .utf8)
        // As root the server runs as nobody: the folder is theirs, and the CA's files readable by the tests.
        let certificates = """
            set -e
            cd \(ShellQuote.quote(dir))
            openssl req -new -x509 -days 2 -nodes -subj '/CN=fanout test CA' -keyout ca.key -out ca.crt 2>/dev/null
            openssl req -new -nodes -subj '/CN=127.0.0.1' -keyout server.key -out server.csr 2>/dev/null
            printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext
            openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out server.crt 2>/dev/null
            chmod 0600 server.key
            printf '%s\\n' 'fanout-admin' > superuser.pw
            chmod 0755 .
            \(asRoot ? "chown -R 65534:65534 ." : "")
            """
        try await run(certificates)
        let user = asRoot ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : ""
        try await run("\(user)\(ShellQuote.quote(bin + "/initdb")) -D \(ShellQuote.quote(dir + "/data")) -U fanout --pwfile=\(ShellQuote.quote(dir + "/superuser.pw")) "
                      + "-A scram-sha-256 --no-sync -E UTF8 --no-locale >\(ShellQuote.quote(dir + "/initdb.log")) 2>&1")
        try """
            local all fanout trust
            hostssl all tls_user 127.0.0.1/32 scram-sha-256
            host all tls_user 127.0.0.1/32 reject
            host all queue_user 127.0.0.1/32 scram-sha-256
            host all wrong_user 127.0.0.1/32 scram-sha-256
            """.write(toFile: dir + "/data/pg_hba.conf", atomically: true, encoding: .utf8)
        if asRoot { try await run("chown 65534:65534 \(ShellQuote.quote(dir + "/data/pg_hba.conf"))") }

        for _ in 0..<5 {
            let port = Int.random(in: 20_000..<40_000)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: asRoot ? "/usr/bin/setpriv" : bin + "/postgres")
            var args = ["-D", dir + "/data", "-p", String(port), "-k", dir + "/socket", "-c", "listen_addresses=127.0.0.1",
                        "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                        "-c", "ssl=on", "-c", "ssl_cert_file=\(dir)/server.crt", "-c", "ssl_key_file=\(dir)/server.key",
                        "-c", "max_connections=200"]
            if asRoot { args = ["--reuid=65534", "--regid=65534", "--clear-groups", bin + "/postgres"] + args }
            p.arguments = args
            let log = FileHandle(forWritingAtPath: dir + "/server.log") ?? {
                _ = FileManager.default.createFile(atPath: dir + "/server.log", contents: nil)
                return FileHandle(forWritingAtPath: dir + "/server.log")
            }()
            p.standardOutput = log
            p.standardError = log
            try p.run()
            let server = PrivatePostgres(port: port, directory: dir, pid: p.processIdentifier, caCertificate: dir + "/ca.crt", bin: bin)
            registerAtExit(server)
            do {
                guard try await server.waitUntilReady(process: p) else {
                    server.stop()
                    continue
                }
                // One statement a call: psql -c runs several in one transaction, and CREATE DATABASE refuses that.
                for sql in ["CREATE ROLE queue_user LOGIN PASSWORD '\(queuePassword)'",
                            "CREATE ROLE tls_user LOGIN PASSWORD '\(tlsPassword)'",
                            "CREATE ROLE wrong_user LOGIN PASSWORD 'not-what-the-password-file-says'",
                            "CREATE DATABASE queue OWNER queue_user",
                            // tls_user acts as queue_user (role membership): the tables any job made are its own too.
                            "GRANT queue_user TO tls_user"] {
                    try await server.admin(sql)
                }
                return server
            } catch {
                server.stop() // a server that started but could not be set up is not left running
                throw error
            }
        }
        let log = (try? String(contentsOfFile: dir + "/server.log", encoding: .utf8)) ?? ""
        throw Failure(description: "the private PostgreSQL did not start on any of 5 ports: \(log.suffix(2000))")
    }

    /// The libpq password file of the test process (mode 0600, as libpq requires), holding the roles' passwords of
    /// every private server it started (`wrong_user`'s wrong). One file for all: PGPASSFILE is the process's, and two
    /// suites with servers of their own must not take it from each other. Sets PGPASSFILE to it.
    public func passwordFile() throws -> String {
        try Self.passwords.withLock { written in
            if !written.contains(port) {
                let lines = """
                    127.0.0.1:\(port):queue:queue_user:\(Self.queuePassword)
                    127.0.0.1:\(port):queue:tls_user:\(Self.tlsPassword)
                    127.0.0.1:\(port):queue:wrong_user:wrong-\(Self.queuePassword)

                    """
                let old = (try? String(contentsOfFile: Self.passwordPath, encoding: .utf8)) ?? ""
                try (old + lines).write(toFile: Self.passwordPath, atomically: true, encoding: .utf8)
                chmod(Self.passwordPath, 0o600)
                written.insert(port)
            }
            setenv("PGPASSFILE", Self.passwordPath, 1)
            return Self.passwordPath
        }
    }

    private static let passwordPath = NSTemporaryDirectory() + "fanout-pgpass-\(getpid())"
    private static let passwords = Mutex<Set<Int>>([])

    /// Waits (at most 30 s) until the server accepts connections; false when it exited (its port was taken).
    private func waitUntilReady(process: Process) async throws -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            guard process.isRunning else { return false }
            if (try? await Self.run("\(ShellQuote.quote(bin + "/pg_isready")) -q -h 127.0.0.1 -p \(port)")) != nil { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Failure(description: "the private PostgreSQL did not accept connections within 30 s (see \(directory)/server.log)")
    }

    /// Runs SQL as the superuser over the server's Unix socket.
    public func admin(_ sql: String, database: String = "postgres") async throws {
        try await Self.run("\(ShellQuote.quote(bin + "/psql")) -X -q -v ON_ERROR_STOP=1 -h \(ShellQuote.quote(directory + "/socket")) -p \(port) "
                           + "-U fanout -d \(database) -c \(ShellQuote.quote(sql))")
    }

    /// A libpq URI for the superuser `fanout` on `database` over the server's Unix socket (trusted: no password),
    /// which any local user can reach, SSH agents of the local fleet included. `database` may hold
    /// `${FANOUT_WORKER}`: the URI is a value of `environment:` then.
    public func socketURL(database: String) -> String {
        "postgresql://fanout@/\(database)?host=\(directory)/socket&port=\(port)"
    }

    /// The cluster's databases, by name.
    public func databases() async throws -> [String] {
        try await Self.run("\(ShellQuote.quote(bin + "/psql")) -X -q -t -A -h \(ShellQuote.quote(directory + "/socket")) -p \(port) "
                           + "-U fanout -d postgres -c 'SELECT datname FROM pg_database ORDER BY datname'")
            .split(separator: "\n").map(String.init)
    }

    /// A port on 127.0.0.1 where nothing listens (the kernel's pick for a socket bound and closed at once): a queue
    /// server that is down.
    public static func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw Failure(description: "bind: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Stops the server by its PID (a fast shutdown, then SIGKILL after 20 s) and removes its folder.
    public func stop() {
        guard !stopped.withLock({ was in defer { was = true }; return was }) else { return }
        Self.stop(pid: pid, directory: directory)
    }

    static func stop(pid: Int32, directory: String) {
        if kill(pid, SIGINT) == 0 {
            let deadline = Date().addingTimeInterval(20)
            while kill(pid, 0) == 0, Date() < deadline { usleep(50_000) }
            if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Servers whose test process died without stopping them (killed: no exit handler ran): stopped by the PID in
    /// their postmaster.pid, their folders removed. Each folder names its owner's PID in `owner`.
    static func sweepOrphans() {
        let base = NSTemporaryDirectory()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [] where name.hasPrefix("fanout-postgres-") {
            let dir = base + name
            guard let owner = (try? String(contentsOfFile: dir + "/owner", encoding: .utf8)).flatMap({ Int32($0) }),
                  kill(owner, 0) != 0, errno == ESRCH else { continue }
            let pid = (try? String(contentsOfFile: dir + "/data/postmaster.pid", encoding: .utf8))?
                .split(separator: "\n").first.flatMap { Int32($0) }
            if let pid { stop(pid: pid, directory: dir) } else { try? FileManager.default.removeItem(atPath: dir) }
        }
    }

    private static let running = Mutex<[(Int32, String)]>([])
    private static let exitHandler: Void = {
        atexit {
            for (pid, dir) in PrivatePostgres.running.withLock({ $0 }) { PrivatePostgres.stop(pid: pid, directory: dir) }
            unlink(PrivatePostgres.passwordPath)
        }
    }()

    private static func registerAtExit(_ server: PrivatePostgres) {
        _ = exitHandler
        running.withLock { $0.append((server.pid, server.directory)) }
    }

    /// Runs a shell line to its end (with a deadline), through the project's own `LocalShell`; its output.
    @discardableResult
    static func run(_ line: String) async throws -> String {
        let (ending, out, err) = await LocalShell("private PostgreSQL").capture(
            Command(executable: "/bin/sh", arguments: ["-c", line]), timeout: 120)
        let text = String(decoding: out + err, as: UTF8.self)
        guard ending == .exited(0) else { throw Failure(description: "`\(line)` ended \(ending): \(text)") }
        return text
    }
}
