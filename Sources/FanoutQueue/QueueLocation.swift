import Foundation

/// Where a build's queue lives: a PostgreSQL connection URL (`postgres://USER@HOST:PORT/DATABASE?sslmode=verify-full`),
/// handed to libpq as it is. The password never travels in it: libpq takes it from PGPASSWORD or a password file
/// (PGPASSFILE, ~/.pgpass), so it appears on no command line, in no config file and in no report.
public struct QueueLocation: Hashable, Sendable, CustomStringConvertible {
    /// The URL as given (it holds no password).
    public let url: String

    public init(_ text: String) throws(QueueError) {
        let text = text.trimmed
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            // Not echoed: text that is not a URL may still hold a password.
            throw .badLocation("the queue's URL", why: "it is not a URL; write postgres://USER@HOST:PORT/DATABASE")
        }
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw .badLocation(text, why: "Fanout's queue is PostgreSQL: the URL starts with postgres:// (not \(scheme)://)")
        }
        if components.password != nil || (components.queryItems ?? []).contains(where: { $0.name.lowercased() == "password" }) {
            // Not even echoed back: the message names the URL without its password.
            var shown = components
            shown.password = nil
            shown.queryItems = shown.queryItems?.filter { $0.name.lowercased() != "password" }
            if shown.queryItems?.isEmpty == true { shown.queryItems = nil }
            throw .badLocation(shown.string ?? "the URL",
                               why: "it holds a password; remove it and give the password in PGPASSWORD or a password file (PGPASSFILE)")
        }
        guard let host = components.host, !host.isEmpty else {
            throw .badLocation(text, why: "it names no host; write postgres://USER@HOST:PORT/DATABASE")
        }
        url = text
    }

    public var description: String { url }
}
