import Foundation

/// libpq, PostgreSQL's own C client, loaded when queue mode first needs it rather than linked: `fanout` then starts,
/// builds and installs without it, and only `--queue` asks for it (Debian's `libpq5`, Homebrew's `libpq`). Its ABI
/// (libpq.so.5) has been stable since PostgreSQL 8.x; the few functions and constants used here are stated below.
struct LibPQ: Sendable {
    typealias Connect = @convention(c) (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<UnsafePointer<CChar>?>?,
                                        Int32) -> OpaquePointer?
    typealias Status = @convention(c) (OpaquePointer?) -> Int32
    typealias Message = @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    typealias Finish = @convention(c) (OpaquePointer?) -> Void
    typealias ExecParams = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafePointer<UInt32>?,
                                           UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
                                           UnsafePointer<Int32>?, Int32) -> OpaquePointer?
    typealias ErrorField = @convention(c) (OpaquePointer?, Int32) -> UnsafeMutablePointer<CChar>?
    typealias Count = @convention(c) (OpaquePointer?) -> Int32
    typealias Value = @convention(c) (OpaquePointer?, Int32, Int32) -> UnsafeMutablePointer<CChar>?
    typealias IsNull = @convention(c) (OpaquePointer?, Int32, Int32) -> Int32

    // libpq-fe.h's constants, part of its ABI.
    static let connectionOK: Int32 = 0 // CONNECTION_OK
    static let commandOK: Int32 = 1 // PGRES_COMMAND_OK
    static let tuplesOK: Int32 = 2 // PGRES_TUPLES_OK
    static let sqlState = Int32(UInt8(ascii: "C")) // PG_DIAG_SQLSTATE

    let connectdbParams: Connect
    let status: Status
    let errorMessage: Message
    let finish: Finish
    let execParams: ExecParams
    let resultStatus: Status
    let resultErrorMessage: Message
    let resultErrorField: ErrorField
    let ntuples: Count
    let nfields: Count
    let getvalue: Value
    let getisnull: IsNull
    let clear: Finish
    let sslInUse: Status

    /// Where libpq is looked for: `FANOUT_LIBPQ` (a path), then the names the dynamic loader resolves, then Homebrew's.
    static let candidates = ["libpq.so.5", "libpq.5.dylib", "/opt/homebrew/opt/libpq/lib/libpq.5.dylib",
                             "/usr/local/opt/libpq/lib/libpq.5.dylib"]

    /// The library, loaded once per process; nil with why when it is not there.
    static let shared: Result<LibPQ, QueueError> = load(
        ProcessInfo.processInfo.environment["FANOUT_LIBPQ"].map { [$0] } ?? candidates)

    static func load(_ names: [String]) -> Result<LibPQ, QueueError> {
        guard let handle = names.lazy.compactMap({ dlopen($0, RTLD_NOW | RTLD_LOCAL) }).first else {
            return .failure(.libraryMissing(tried: names))
        }
        func symbol<T>(_ name: String, as: T.Type) throws(QueueError) -> T {
            guard let pointer = dlsym(handle, name) else { throw .libraryMissing(tried: names) }
            return unsafeBitCast(pointer, to: T.self)
        }
        do {
            return .success(LibPQ(
                connectdbParams: try symbol("PQconnectdbParams", as: Connect.self),
                status: try symbol("PQstatus", as: Status.self),
                errorMessage: try symbol("PQerrorMessage", as: Message.self),
                finish: try symbol("PQfinish", as: Finish.self),
                execParams: try symbol("PQexecParams", as: ExecParams.self),
                resultStatus: try symbol("PQresultStatus", as: Status.self),
                resultErrorMessage: try symbol("PQresultErrorMessage", as: Message.self),
                resultErrorField: try symbol("PQresultErrorField", as: ErrorField.self),
                ntuples: try symbol("PQntuples", as: Count.self),
                nfields: try symbol("PQnfields", as: Count.self),
                getvalue: try symbol("PQgetvalue", as: Value.self),
                getisnull: try symbol("PQgetisnull", as: IsNull.self),
                clear: try symbol("PQclear", as: Finish.self),
                sslInUse: try symbol("PQsslInUse", as: Status.self)))
        } catch {
            return .failure(error)
        }
    }
}
