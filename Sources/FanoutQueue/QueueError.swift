import Foundation

/// What went wrong with the queue, said so that a person knows what to do. No message ever holds a password: libpq's
/// own messages name the host, the port and the user, never the password.
public enum QueueError: Error, Equatable, Sendable, CustomStringConvertible {
    /// libpq could not be loaded.
    case libraryMissing(tried: [String])
    /// The queue's address is not one Fanout takes.
    case badLocation(String, why: String)
    /// The server could not be reached, or refused the connection (`message` is libpq's).
    case unreachable(String, message: String)
    /// The server refused who we are (password, user, or its pg_hba.conf rules).
    case refused(String, message: String)
    /// A statement failed (`state` is its SQLSTATE).
    case statement(String, state: String?, message: String)
    /// The connection broke during a statement.
    case connectionLost(String, message: String)
    /// Another job of the same build id seeds a different set of tests.
    case differentBuild(build: String, ours: String, theirs: String)
    /// The job that won the right to seed did not seed in time.
    case notSeeded(build: String, seeder: String, seconds: Double)
    /// Another live job of the build already has this job's name.
    case workerTaken(build: String, worker: String, seenSecondsAgo: Double)
    /// No job has joined this build (yet).
    case unknownBuild(String)

    public var description: String {
        switch self {
        case .libraryMissing(let tried):
            "queue mode needs libpq, PostgreSQL's client library, and it was not found (tried \(tried.joined(separator: ", "))): "
                + "install it (Debian/Ubuntu: apt-get install libpq5; macOS: brew install libpq), or set FANOUT_LIBPQ to its path"
        case .badLocation(let location, let why):
            "the queue \(location) is not usable: \(why)"
        case .unreachable(let location, let message):
            "could not reach the queue at \(location): \(message.trimmed). Is the server running and its address right?"
        case .refused(let location, let message):
            "the queue at \(location) refused the connection: \(message.trimmed). Give the password in PGPASSWORD or a "
                + "password file (PGPASSFILE, ~/.pgpass), and check the user name and the server's pg_hba.conf"
        case .statement(let location, let state, let message):
            "the queue at \(location) failed a statement\(state.map { " (SQLSTATE \($0))" } ?? ""): \(message.trimmed)"
        case .connectionLost(let location, let message):
            "the connection to the queue at \(location) was lost: \(message.trimmed)"
        case .differentBuild(let build, let ours, let theirs):
            "build \(build) is already queued with other tests (its tests' fingerprint \(theirs), this job's \(ours)): "
                + "every job of a build must run the same product. Give each build its own id (--build-id), or re-run the whole build"
        case .notSeeded(let build, let seeder, let seconds):
            "build \(build): the job that won the right to fill the queue (\(seeder)) did not fill it within \(Int(seconds)) s; "
                + "see that job's log (it may have failed while building or listing tests)"
        case .workerTaken(let build, let worker, let ago):
            "build \(build) already has a live job named \(worker) (seen \(Int(ago.rounded())) s ago): every job of a build needs "
                + "its own name. Give each job its own --worker (its index); a CI retry of a job that died may join once "
                + "that job's leases lapse"
        case .unknownBuild(let build):
            "no job has joined build \(build) on this queue: check that the jobs and this step use the same --build-id "
                + "(or CI build) and the same queue, and that a job started"
        }
    }
}

extension String {
    var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
