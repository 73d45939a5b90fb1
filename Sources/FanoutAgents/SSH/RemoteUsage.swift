import FanoutCore

/// Reads what the agent printed about what units consumed: the shell's `times` (a unit's CPU time as its test
/// ended, ``RemoteLayout/takeUsage(_:)``) and the sampler's lines (``RemoteLayout/usageSample``). Pure parsing, no
/// paths and no shell.
public enum RemoteUsage {
    /// The CPU seconds in the output of the shell builtin `times`: the sum of its second line (the children's user
    /// and system time). Reads `0m1.230000s` (dash), `0m1.230s` (bash, also with a decimal comma), `1.23s` (zsh),
    /// `1h2m3.5s`. Nil when the output is not that.
    public static func parseTimes(_ output: String) -> Double? {
        let lines = output.split(whereSeparator: \.isNewline).filter { !$0.allSatisfy(\.isWhitespace) }
        guard lines.count >= 2 else { return nil }
        let words = lines[1].split(whereSeparator: \.isWhitespace)
        guard words.count == 2, let user = duration(words[0]), let system = duration(words[1]) else { return nil }
        return user + system
    }

    private static func duration(_ word: Substring) -> Double? {
        var total = 0.0
        var number = ""
        for c in word {
            switch c {
            case "0"..."9", ".": number.append(c)
            case ",": number.append(".")
            case "h", "m", "s":
                guard let value = Double(number) else { return nil }
                total += value * (c == "h" ? 3600 : c == "m" ? 60 : 1)
                number = ""
            default: return nil
            }
        }
        return number.isEmpty && word.last == "s" ? total : nil
    }

    /// The lines of ``usageSample``: unit → what its group consumed so far (malformed lines are skipped).
    public static func parseUsageSample(_ output: String) -> [Int: ResourceUsage] {
        var samples: [Int: ResourceUsage] = [:]
        var waits: [Int: (ns: Int64, ready: Int)] = [:]
        for line in output.split(whereSeparator: \.isNewline) {
            let words = line.split(separator: " ")
            if words.count == 4, words[0] == "W", let unit = Int(words[1]), let ns = Int64(words[2]), ns >= 0,
               let ready = Int(words[3]), ready >= 0 {
                let sum = waits[unit] ?? (0, 0)
                waits[unit] = (sum.ns &+ ns, sum.ready + ready)
                continue
            }
            guard words.count == 3, let unit = Int(words[0]), let cpu = Double(words[1]), cpu >= 0, cpu.isFinite,
                  let kib = Int64(words[2]), kib >= 0, kib < Int64.max / 1024 else { continue }
            let usage = ResourceUsage(cpuSeconds: cpu, peakMemoryBytes: kib > 0 ? kib * 1024 : nil)
            samples[unit] = usage.atLeast(samples[unit])
        }
        for (unit, wait) in waits where samples[unit] != nil {
            samples[unit]?.cpuWaitSeconds = Double(wait.ns) / 1e9
            samples[unit]?.readyThreads = wait.ready
        }
        return samples
    }
}
