/// One event of a remote command started with `SSHConnection.execute`.
/// A stream carries any number of `.stdout`/`.stderr` chunks, then exactly one `.exited` or `.failed`.
public enum SSHExecEvent: Sendable, Equatable {
    case stdout([UInt8])
    case stderr([UInt8])
    /// The command ended. `signal` is the signal name without "SIG" (e.g. "KILL") when a signal ended it; then
    /// `status` is meaningless (sshd reports 0).
    case exited(status: Int32, signal: String?)
    /// The command's outcome is unknown: the channel could not be opened, or the connection was lost or closed.
    case failed(SSHError)
}

/// Everything a command produced, collected by `SSHConnection.run`.
public struct SSHCommandResult: Sendable, Equatable {
    public var stdout: [UInt8]
    public var stderr: [UInt8]
    public var status: Int32
    /// The signal that ended the command ("KILL", "TERM", ...), if any.
    public var signal: String?
    /// Wall time from the request to the exit status, in seconds.
    public var duration: Double

    public init(stdout: [UInt8], stderr: [UInt8], status: Int32, signal: String?, duration: Double) {
        self.stdout = stdout
        self.stderr = stderr
        self.status = status
        self.signal = signal
        self.duration = duration
    }

    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
    /// True when the command exited by itself with status 0.
    public var succeeded: Bool { status == 0 && signal == nil }
}

/// What `SSHConnection.stat` reports about a remote path.
public struct SSHFileAttributes: Sendable, Equatable {
    public var size: UInt64?
    /// Permission and type bits (`st_mode`).
    public var mode: UInt32?
    public var modificationTime: UInt64?

    public var isDirectory: Bool { mode.map { $0 & 0o170000 == 0o040000 } ?? false }
    public var isRegularFile: Bool { mode.map { $0 & 0o170000 == 0o100000 } ?? false }
}

/// How long each step of `SSHConnection.connect` took, in seconds.
public struct SSHConnectTimings: Sendable, Equatable {
    public var tcpConnect: Double
    /// Banner exchange and key exchange.
    public var handshake: Double
    /// Reading known_hosts was done before the handshake; this is the check (and an accept-new write).
    public var hostKeyCheck: Double
    public var authentication: Double
    /// Opening the connection's internal channel. sshd takes ~40 ms for the first channel of a session (whichever
    /// it is), so this is time the first command would otherwise pay.
    public var firstChannel: Double
    public var total: Double
}
