import FanoutCore

/// What an agent's machine offers (``AgentResources``), read with one command: online CPUs (`getconf
/// _NPROCESSORS_ONLN`, else macOS's `sysctl -n hw.ncpu`), physical memory (/proc/meminfo's MemTotal in KiB, else
/// `sysctl -n hw.memsize` in bytes) and the machine's identity (/etc/machine-id, else the host name: agents that
/// share a machine, like a fleet on loopback, share its cores).
public enum AgentResourcesProbe {
    /// Prints `cores N`, `memory-kB N` or `memory-bytes N`, and `machine ID`, one a line.
    public static let command = """
        echo "cores $(getconf _NPROCESSORS_ONLN 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null)"
        m=$(awk '$1 == "MemTotal:" { print $2; exit }' /proc/meminfo 2>/dev/null)
        if [ -n "$m" ]; then echo "memory-kB $m"; else echo "memory-bytes $(sysctl -n hw.memsize 2>/dev/null)"; fi
        echo "machine $( (cat /etc/machine-id 2>/dev/null || hostname 2>/dev/null) | head -n 1)"
        """

    /// Nil unless the output names at least one core; memory and machine stay nil when the agent could not tell.
    public static func parse(_ output: String) -> AgentResources? {
        var cores: Int?
        var memory: Int64?
        var machine: String?
        for line in output.split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let value = String(parts[1].drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
            switch parts[0] {
            case "cores": cores = Int(value)
            case "memory-kB": memory = Int64(value).flatMap { $0 > 0 && $0 < Int64.max / 1024 ? $0 * 1024 : nil }
            case "memory-bytes": memory = Int64(value).flatMap { $0 > 0 ? $0 : nil }
            case "machine": machine = value.isEmpty ? nil : value
            default: continue
            }
        }
        guard let cores, cores >= 1 else { return nil }
        return AgentResources(cores: cores, memoryBytes: memory, machine: machine)
    }
}
