import FanoutCore
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the processes of a unit's group consumed so far, read from /proc while it runs (Linux), and what the
/// kernel reports when its leader is reaped (`wait4`'s rusage, every platform).
///
/// A sample adds, over every live process whose process group is the unit's, utime + stime (the process, all its
/// threads) + cutime + cstime (its children that it waited for, which are no longer live, so nothing counts twice),
/// and takes the largest VmHWM (peak resident set) among them, and adds how long their live threads waited on a run
/// queue (``ResourceUsage/cpuWaitSeconds``). Precision: one clock tick (10 ms with the usual
/// CLK_TCK of 100). What is lost: a member that exits and is reaped by nobody in the group (an orphan adopted by
/// init) takes its time out of later samples, which is why a unit's usage is the running maximum of its samples.
/// While a parent reaps a member of the group, a scan may see the member and, later in the same scan, the parent
/// already credited with it: /proc is read in ascending pid order, parents usually before their children, so this
/// race mostly undercounts for a moment rather than overcounts.
///
/// One scan of /proc covers every live group of this process, and is reused for half a sample interval: eight
/// units sampled once a second cost about two scans a second, not eight.
enum ProcessGroupUsage {
    #if os(Linux)
    /// Clock ticks per second (`sysconf(_SC_CLK_TCK)`), the unit of /proc/<pid>/stat's times.
    static let ticksPerSecond: Double = {
        let ticks = sysconf(Int32(_SC_CLK_TCK))
        return ticks > 0 ? Double(ticks) : 100
    }()

    private struct Totals {
        var ticks: Int64 = 0
        var peakKiB: Int64 = 0
        /// Run-queue delay of the members' live threads, in nanoseconds (nil: no schedstat could be read).
        var waitNanoseconds: Int64?
        /// Live threads of the members that are ready to run (state R) right now.
        var ready = 0
    }

    private struct Scan {
        var taken: ContinuousClock.Instant
        var groups: Set<pid_t>
        var totals: [pid_t: Totals]
    }

    /// The last scan, shared by the pump threads of every unit (held while a scan runs, so that two threads that
    /// sample at once do not both scan).
    private static let lastScan = Mutex<Scan?>(nil)

    /// What the group `group` consumed so far; nil when none of its processes could be read (all gone).
    /// `groups`: every group worth scanning for at the same time (the other running units).
    static func sample(group: pid_t, among groups: Set<pid_t>) -> ResourceUsage? {
        let totals: Totals? = lastScan.withLock { last in
            let now = ContinuousClock.now
            if let last, last.groups.contains(group),
               now - last.taken < .seconds(ProcessEvent.usageInterval / 2) {
                return last.totals[group]
            }
            var wanted = groups
            wanted.insert(group)
            let totals = scan(wanted)
            last = Scan(taken: now, groups: wanted, totals: totals)
            return totals[group]
        }
        guard let totals else { return nil }
        return ResourceUsage(cpuSeconds: Double(totals.ticks) / ticksPerSecond,
                             peakMemoryBytes: totals.peakKiB > 0 ? totals.peakKiB * 1024 : nil,
                             cpuWaitSeconds: totals.waitNanoseconds.map { Double($0) / 1e9 },
                             readyThreads: totals.waitNanoseconds == nil ? nil : totals.ready)
    }

    /// One pass over /proc: the totals of every group in `groups` that has a live (or zombie) process.
    private static func scan(_ groups: Set<pid_t>) -> [pid_t: Totals] {
        guard let dir = opendir("/proc") else { return [:] }
        defer { closedir(dir) }
        var totals: [pid_t: Totals] = [:]
        var buffer = [UInt8](repeating: 0, count: 4096)
        while let entry = readdir(dir) {
            guard let pid = processID(entry) else { continue }
            // An entry that cannot be read any more is a process that just exited: skipped.
            guard let stat = readFile("/proc/\(pid)/stat", into: &buffer, parse: parseStat),
                  groups.contains(stat.group) else { continue }
            var t = totals[stat.group] ?? Totals()
            t.ticks += stat.ticks
            if let hwm = readFile("/proc/\(pid)/status", into: &buffer, parse: parsePeakResident) {
                t.peakKiB = max(t.peakKiB, hwm)
            }
            if let threads = threads(of: pid, buffer: &buffer) {
                t.waitNanoseconds = (t.waitNanoseconds ?? 0) &+ threads.waitNanoseconds
                t.ready += threads.ready
            }
            totals[stat.group] = t
        }
        return totals
    }

    /// What the live threads of `pid` say of the scheduler: how long they waited on a run queue, ready to run, in
    /// nanoseconds (the second field of /proc/<pid>/task/<tid>/schedstat, `<on-cpu ns> <run-queue ns>
    /// <timeslices>`, summed), and how many are ready to run right now (state `R` in /proc/<pid>/task/<tid>/stat).
    /// Per thread, since /proc/<pid>/schedstat alone is the main thread's and tests compute on other threads too.
    /// The kernel adds to a thread's wait only when it gets a core again, so a thread that gets none at all shows
    /// only as ready. Nil when the kernel keeps no schedstat (built without CONFIG_SCHED_INFO) or the process is
    /// gone.
    private static func threads(of pid: pid_t, buffer: inout [UInt8]) -> (waitNanoseconds: Int64, ready: Int)? {
        guard let dir = opendir("/proc/\(pid)/task") else { return nil }
        defer { closedir(dir) }
        var total: Int64?, ready = 0
        while let entry = readdir(dir) {
            guard let tid = processID(entry),
                  let wait = readFile("/proc/\(pid)/task/\(tid)/schedstat", into: &buffer, parse: parseSchedstat)
            else { continue }
            total = (total ?? 0) &+ wait
            if readFile("/proc/\(pid)/task/\(tid)/stat", into: &buffer, parse: parseState) == UInt8(ascii: "R") {
                ready += 1
            }
        }
        return total.map { ($0, ready) }
    }

    /// The state letter of a /proc stat line: the first word after the last `)`.
    static func parseState(_ text: UnsafeBufferPointer<UInt8>) -> UInt8? {
        guard let close = text.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        return text[(close + 1)...].first { $0 != UInt8(ascii: " ") }
    }

    /// `<on-cpu ns> <run-queue ns> <timeslices>`: the run-queue wait.
    static func parseSchedstat(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        var field = 0, value: Int64 = 0, digits = 0
        for byte in text {
            if byte >= 48, byte <= 57 {
                guard value < Int64.max / 10 - 9 else { return nil }
                value = value * 10 + Int64(byte - 48)
                digits += 1
            } else if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") {
                guard digits > 0 else { continue }
                field += 1
                if field == 2 { return value }
                value = 0
                digits = 0
            } else {
                return nil
            }
        }
        return field == 1 && digits > 0 ? value : nil
    }

    /// The pid a /proc entry names, if it names one (all digits).
    private static func processID(_ entry: UnsafeMutablePointer<dirent>) -> pid_t? {
        withUnsafeBytes(of: entry.pointee.d_name) { name -> pid_t? in
            var value: Int32 = 0
            for byte in name {
                if byte == 0 { break }
                guard byte >= 48, byte <= 57, value < Int32.max / 10 - 9 else { return nil }
                value = value * 10 + Int32(byte - 48)
            }
            return value > 0 ? value : nil
        }
    }

    /// Reads a small /proc file whole (up to the buffer's size) and parses it; nil when it cannot be read.
    private static func readFile<T>(_ path: String, into buffer: inout [UInt8],
                                    parse: (UnsafeBufferPointer<UInt8>) -> T?) -> T? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return buffer.withUnsafeMutableBufferPointer { b -> T? in
            guard let base = b.baseAddress else { return nil }
            var count = 0
            while count < b.count {
                let n = read(fd, base + count, b.count - count)
                if n < 0, errno == EINTR { continue }
                if n <= 0 { break }
                count += n
            }
            return count > 0 ? parse(UnsafeBufferPointer(start: base, count: count)) : nil
        }
    }

    /// `pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime …`:
    /// the process group and utime + stime + cutime + cstime in ticks. The fields are counted after the LAST `)`,
    /// since comm may hold spaces and parentheses.
    static func parseStat(_ text: UnsafeBufferPointer<UInt8>) -> (group: pid_t, ticks: Int64)? {
        guard let close = text.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        var field = 0 // 1: state, 2: ppid, 3: pgrp, … 12-15: utime, stime, cutime, cstime
        var value: Int64 = 0
        var inField = false
        var group: Int64 = -1
        var ticks: Int64 = 0
        for i in (close + 1)..<(text.count + 1) {
            let byte = i < text.count ? text[i] : UInt8(ascii: " ")
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") {
                guard inField else { continue }
                field += 1
                if field == 3 { group = value }
                if (12...15).contains(field) { ticks += value }
                if field == 15 { break }
                value = 0
                inField = false
            } else {
                inField = true
                if byte >= 48, byte <= 57 { value = value &* 10 &+ Int64(byte - 48) }
            }
        }
        guard field >= 15, group > 0, group <= Int64(Int32.max) else { return nil }
        return (pid_t(group), ticks)
    }

    /// `VmHWM:     12345 kB` from /proc/<pid>/status, in KiB (absent for zombies and kernel threads).
    static func parsePeakResident(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        let key = Array("VmHWM:".utf8)
        var lineStart = 0
        while lineStart < text.count {
            var end = lineStart
            while end < text.count, text[end] != UInt8(ascii: "\n") { end += 1 }
            if end - lineStart > key.count, text[lineStart..<(lineStart + key.count)].elementsEqual(key) {
                var value: Int64 = 0
                for byte in text[(lineStart + key.count)..<end] where byte >= 48 && byte <= 57 {
                    value = value * 10 + Int64(byte - 48)
                }
                return value
            }
            lineStart = end + 1
        }
        return nil
    }
    #else
    /// Darwin has no /proc: a unit's usage is measured once, when its leader is reaped (``final(_:)``).
    static func sample(group: pid_t, among groups: Set<pid_t>) -> ResourceUsage? { nil }
    #endif

    /// What `wait4` reports of a reaped leader: its CPU time and that of every child it waited for, and the largest
    /// resident set among them (`ru_maxrss`: KiB on Linux, bytes on Darwin).
    static func final(_ usage: rusage) -> ResourceUsage {
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1_000_000 }
        #if canImport(Darwin)
        let peak = Int64(usage.ru_maxrss)
        #else
        let peak = Int64(usage.ru_maxrss) * 1024
        #endif
        return ResourceUsage(cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime),
                             peakMemoryBytes: peak > 0 ? peak : nil)
    }
}
