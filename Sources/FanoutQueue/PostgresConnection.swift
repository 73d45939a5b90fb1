import Dispatch
import Foundation

/// One libpq connection, used from one serial dispatch queue of its own: libpq blocks while it waits for the server,
/// and that wait must not hold a thread of Swift's cooperative pool. Every statement is bounded (connect timeout,
/// statement timeout, TCP keepalives), so a server that stops answering turns into an error, not a hang.
final class PostgresConnection: @unchecked Sendable {
    // @unchecked: `connection` is touched only on `queue`.
    private let lib: LibPQ
    private let location: QueueLocation
    private let queue = DispatchQueue(label: "fanout.queue.postgres")
    private var connection: OpaquePointer?

    /// Rows of text values (nil for SQL NULL), as libpq returns them in text format.
    typealias Rows = [[String?]]

    private init(lib: LibPQ, location: QueueLocation, connection: OpaquePointer) {
        self.lib = lib
        self.location = location
        self.connection = connection
    }

    deinit {
        if let connection { lib.finish(connection) }
    }

    /// Connects, waiting at most `timeout` seconds for the server.
    static func connect(_ location: QueueLocation, timeout: Int = 10) async throws(QueueError) -> PostgresConnection {
        let lib = try LibPQ.shared.get()
        let result: Result<OpaquePointer, QueueError> = await withCheckedContinuation { done in
            DispatchQueue.global().async { done.resume(returning: open(lib, location, timeout: timeout)) }
        }
        return PostgresConnection(lib: lib, location: location, connection: try result.get())
    }

    private static func open(_ lib: LibPQ, _ location: QueueLocation, timeout: Int) -> Result<OpaquePointer, QueueError> {
        let settings: [(String, String)] = [
            ("dbname", location.url), // a URL here is expanded by libpq (expand_dbname = 1)
            ("connect_timeout", String(max(2, timeout))),
            ("application_name", "fanout"),
            // A statement the server does not finish in 30 s, or a server that stops acknowledging for 15 s, fails.
            // Notices ("relation … already exists, skipping") would reach the terminal through libpq's default
            // notice processor: only warnings and errors do.
            // A transaction left open by a connection that broke holds its row locks only a minute.
            ("options", "-c statement_timeout=30000 -c idle_in_transaction_session_timeout=60000 -c client_min_messages=warning"),
            ("keepalives", "1"), ("keepalives_idle", "5"), ("keepalives_interval", "2"), ("keepalives_count", "3"),
            ("tcp_user_timeout", "15000"),
        ]
        let keys = settings.map { strdup($0.0) }
        let values = settings.map { strdup($0.1) }
        defer { (keys + values).forEach { free($0) } }
        let k = keys.map { UnsafePointer($0) } + [nil]
        let v = values.map { UnsafePointer($0) } + [nil]
        guard let connection = lib.connectdbParams(k, v, 1) else {
            return .failure(.unreachable(location.url, message: "libpq could not allocate a connection"))
        }
        guard lib.status(connection) == LibPQ.connectionOK else {
            let message = lib.errorMessage(connection).map { String(cString: $0) } ?? "unknown error"
            lib.finish(connection)
            return .failure(Self.refusal(message) ? .refused(location.url, message: message)
                                                   : .unreachable(location.url, message: message))
        }
        return .success(connection)
    }

    /// Whether libpq's message says the server refused who we are, rather than could not be reached.
    static func refusal(_ message: String) -> Bool {
        ["password authentication failed", "no password supplied", "no pg_hba.conf entry", "role \"",
         "certificate", "SSL"].contains { message.contains($0) }
    }

    /// Runs `body` on the connection's queue: statements in it run one after the other, with nothing in between.
    func session<T: Sendable>(_ body: @escaping @Sendable (Session) throws(QueueError) -> T) async throws(QueueError) -> T {
        let result: Result<T, QueueError> = await withCheckedContinuation { done in
            queue.async {
                let session = Session(owner: self)
                do throws(QueueError) {
                    done.resume(returning: .success(try body(session)))
                } catch {
                    done.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// One statement with text parameters.
    func query(_ sql: String, _ parameters: [String?] = []) async throws(QueueError) -> Rows {
        try await session { s throws(QueueError) in try s.query(sql, parameters) }
    }

    /// Whether the connection is encrypted with TLS.
    var usesTLS: Bool {
        get async {
            await withCheckedContinuation { done in
                queue.async { done.resume(returning: self.connection.map { self.lib.sslInUse($0) == 1 } ?? false) }
            }
        }
    }

    /// Closes the connection (what is not committed is rolled back by the server).
    func close() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            queue.async {
                if let c = self.connection { self.lib.finish(c) }
                self.connection = nil
                done.resume()
            }
        }
    }

    /// Statements on the connection's queue.
    struct Session {
        fileprivate let owner: PostgresConnection

        func query(_ sql: String, _ parameters: [String?] = []) throws(QueueError) -> Rows {
            dispatchPrecondition(condition: .onQueue(owner.queue))
            let lib = owner.lib
            guard let connection = owner.connection else {
                throw .connectionLost(owner.location.url, message: "the connection was closed")
            }
            let copies = parameters.map { p -> UnsafeMutablePointer<CChar>? in p.flatMap { strdup($0) } }
            defer { copies.forEach { free($0) } }
            let values = copies.map { $0.map { UnsafePointer($0) } }
            guard let result = lib.execParams(connection, sql, Int32(values.count), nil, values, nil, nil, 0) else {
                throw lost(lib, connection)
            }
            defer { lib.clear(result) }
            let status = lib.resultStatus(result)
            guard status == LibPQ.commandOK || status == LibPQ.tuplesOK else {
                if lib.status(connection) != LibPQ.connectionOK { throw lost(lib, connection) }
                let message = lib.resultErrorMessage(result).map { String(cString: $0) } ?? "unknown error"
                let state = lib.resultErrorField(result, LibPQ.sqlState).map { String(cString: $0) }
                throw .statement(owner.location.url, state: state, message: message)
            }
            let rows = Int(lib.ntuples(result)), columns = Int(lib.nfields(result))
            return (0..<rows).map { r in
                (0..<columns).map { c in
                    lib.getisnull(result, Int32(r), Int32(c)) == 1 ? nil
                        : lib.getvalue(result, Int32(r), Int32(c)).map { String(cString: $0) }
                }
            }
        }

        /// `body` in a transaction: committed when it returns, rolled back when it throws.
        func transaction<T>(_ body: () throws(QueueError) -> T) throws(QueueError) -> T {
            _ = try query("BEGIN")
            do {
                let value = try body()
                _ = try query("COMMIT")
                return value
            } catch {
                _ = try? query("ROLLBACK")
                throw error
            }
        }

        private func lost(_ lib: LibPQ, _ connection: OpaquePointer) -> QueueError {
            .connectionLost(owner.location.url, message: lib.errorMessage(connection).map { String(cString: $0) } ?? "no answer")
        }
    }
}
