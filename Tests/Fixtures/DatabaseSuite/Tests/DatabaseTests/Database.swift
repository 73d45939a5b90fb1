import Foundation

/// The database the test's environment names, through the `psql` client.
enum Database {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static var url: String {
        get throws {
            guard let url = ProcessInfo.processInfo.environment["DATABASE_URL"], !url.isEmpty else {
                throw Failure(description: "DATABASE_URL is not set: give the tests a PostgreSQL database")
            }
            return url
        }
    }

    /// Runs each statement in a transaction of its own (psql runs every -c apart); returns what the last printed.
    @discardableResult
    static func run(_ statements: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["psql", try url, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1"] + statements.flatMap { ["-c", $0] }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw Failure(description: "psql failed (exit \(p.terminationStatus)): \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Empties the shared table, fills it with `rows` rows, waits, and returns how many rows it then holds.
    static func fillAndCount(rows: Int, test: String) throws -> Int {
        try record(test)
        let wait = ProcessInfo.processInfo.environment["DATABASE_WAIT"].flatMap(Double.init) ?? 0.3
        try run(["CREATE TABLE IF NOT EXISTS items (test text NOT NULL, n integer NOT NULL)",
                 "TRUNCATE items",
                 "INSERT INTO items SELECT '\(test)', g FROM generate_series(1, \(rows)) AS g"])
        Thread.sleep(forTimeInterval: wait)
        let text = try run(["SELECT count(*) FROM items"])
        guard let count = Int(text) else { throw Failure(description: "not a count: \(text)") }
        return count
    }

    /// One line in IDENTITY_LOG (when set): who ran `test`, against which database.
    static func record(_ test: String) throws {
        guard let path = ProcessInfo.processInfo.environment["IDENTITY_LOG"] else { return }
        let env = ProcessInfo.processInfo.environment
        let fields = ["FANOUT_WORKER", "FANOUT_SLOT", "FANOUT_AGENT", "FANOUT_DESTINATION", "FANOUT_RUN_ID", "DATABASE_URL"]
        let line = (fields.map { env[$0] ?? "-" } + [test]).joined(separator: " ") + "\n"
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o666)
        guard fd >= 0 else { throw Failure(description: "cannot open \(path): errno \(errno)") }
        defer { close(fd) }
        _ = line.withCString { write(fd, $0, strlen($0)) }
    }
}
