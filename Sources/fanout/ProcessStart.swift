import Foundation

/// How long ago this process started: the `start-up` phase of a run (the time to read the command line and the
/// config before the run begins). Nil where it cannot be read (Linux reads /proc; elsewhere nil).
enum ProcessStart {
    static func secondsAgo() -> Double? {
        #if os(Linux)
        // /proc/self/stat's 22nd field: the start time in clock ticks after boot; /proc/uptime: seconds since boot.
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let uptime = try? String(contentsOfFile: "/proc/uptime", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // The fields after the command's name (which may hold spaces and parentheses): field 3 onwards.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        guard fields.count > 19, let start = Double(fields[19]), ticks > 0,
              let up = uptime.split(separator: " ").first.flatMap({ Double($0) }) else { return nil }
        // /proc/uptime of a container (LXCFS) may count from another boot than the start time: then it means nothing.
        let ago = up - start / ticks
        return ago >= 0 ? ago : nil
        #else
        return nil
        #endif
    }
}
