import FanoutSSH
import Foundation
import Synchronization

/// The connections to ProxyJump bastions, one per chain of hops, shared by every agent behind them: ten agents
/// behind one bastion make one connection to it, each agent a channel inside it.
///
/// A connection that died (the bastion went down) is made again by the next agent that needs it, so agents come
/// back (re-admission) as soon as their bastion does. A chain's connections are closed when the last agent that
/// uses them lets go (`release`).
final class BastionPool: Sendable {
    static let shared = BastionPool()

    private struct Entry {
        var connection: SSHConnection?
        var connecting: Task<SSHConnection, any Error>?
        var users = 0
    }

    private let entries = Mutex<[String: Entry]>([:])

    private static func key(_ chain: ArraySlice<SSHHop>) -> String { chain.map(\.key).joined(separator: " → ") }

    /// Counts one more agent using every prefix of `chain`.
    func acquire(_ chain: [SSHHop]) {
        entries.withLock { entries in
            for end in chain.indices { entries[Self.key(chain[...end]), default: Entry()].users += 1 }
        }
    }

    /// One agent less; connections nobody uses any more are closed.
    func release(_ chain: [SSHHop]) async {
        let closing = entries.withLock { entries -> [SSHConnection] in
            var closing: [SSHConnection] = []
            for end in chain.indices.reversed() {
                let key = Self.key(chain[...end])
                guard var entry = entries[key] else { continue }
                entry.users -= 1
                if entry.users <= 0 {
                    if let c = entry.connection { closing.append(c) }
                    entry.connecting?.cancel()
                    entries[key] = nil
                } else {
                    entries[key] = entry
                }
            }
            return closing
        }
        for c in closing { await c.close() }
    }

    /// The first hop of `chain` whose connection is known and dead, for loss messages.
    func deadHop(_ chain: [SSHHop]) -> Int? {
        entries.withLock { entries in
            chain.indices.first { end in entries[Self.key(chain[...end])]?.connection.map { !$0.isAlive } ?? false }
        }
    }

    /// A live connection to the last hop of `chain`, each hop reached through the one before.
    /// Fails with a `HopFailure` naming the hop that failed.
    func connection(_ chain: ArraySlice<SSHHop>, settings: SSHSettings) async throws -> SSHConnection {
        let key = Self.key(chain)
        let task: Task<SSHConnection, any Error> = entries.withLock { entries in
            var entry = entries[key] ?? Entry()
            if let c = entry.connection, c.isAlive { return Task { c } }
            if let t = entry.connecting { return t }
            let t = Task { () async throws -> SSHConnection in
                let via = chain.count > 1 ? try await self.connection(chain.dropLast(), settings: settings) : nil
                return try await Self.connect(hop: chain.last!, index: chain.count - 1, via: via, settings: settings)
            }
            entry.connection = nil
            entry.connecting = t
            entries[key] = entry
            return t
        }
        do {
            let c = try await task.value
            let kept = entries.withLock { entries -> Bool in
                guard entries[key] != nil else { return false }
                entries[key]?.connection = c
                entries[key]?.connecting = nil
                return true
            }
            // Every agent let go while it was being made: nobody would ever close it.
            if !kept { await c.close() }
            return c
        } catch {
            entries.withLock { $0[key]?.connecting = nil }
            throw error
        }
    }

    /// Connects to one hop, directly or through `via`.
    static func connect(hop: SSHHop, index: Int, via: SSHConnection?, settings: SSHSettings) async throws -> SSHConnection {
        do {
            let authentication = try hop.sshAuthentication()
            let options = SSHOptions(knownHostsPath: hop.knownHosts, hostKeyPolicy: settings.hostKeyPolicy,
                                     connectTimeout: hop.connectTimeout, keepaliveInterval: hop.keepaliveInterval,
                                     deadPeerTimeout: settings.deadAfter)
            if let via {
                return try await SSHConnection.connect(to: hop.endpoint, via: via, authentication: authentication,
                                                       options: options)
            }
            return try await SSHConnection.connect(to: hop.endpoint, authentication: authentication, options: options)
        } catch let failure as HopFailure {
            throw failure
        } catch {
            throw HopFailure(index: index, error: error)
        }
    }
}

/// A connection along a route failed at hop `index` (0: the first bastion, or the agent when there is none).
struct HopFailure: Error, CustomStringConvertible {
    var index: Int
    var error: any Error
    var description: String { "\(error)" }
}

extension SSHHop {
    /// FanoutSSH's authentication for this hop (a passphrase is read from its environment variable only now).
    func sshAuthentication() throws -> SSHAuthentication {
        switch authentication {
        case .agent(let socket):
            return .agent(socketPath: socket)
        case let .keyFile(path, certificate, variable):
            var passphrase: String?
            if let variable {
                guard let value = ProcessInfo.processInfo.environment[variable] else {
                    throw AgentError.invalidConfig("\(name): the passphrase variable \(variable) is not set in the "
                        + "environment")
                }
                passphrase = value
            }
            if let certificate { return .certificate(keyPath: path, certificatePath: certificate, passphrase: passphrase) }
            return .keyFile(path: path, passphrase: passphrase)
        }
    }
}
