import FanoutAgents
import FanoutCore

/// Runs `script` with /bin/sh (dash, the usual remote shell) on a local slot: its ending, standard output and error.
func sh(_ script: String) async -> (UnitEnding, String, String) {
    let (e, o, r) = await LocalTransport(slots: 1).capture(Command(executable: "/bin/sh", arguments: ["-c", script]))
    return (e, String(decoding: o, as: UTF8.self), String(decoding: r, as: UTF8.self))
}
