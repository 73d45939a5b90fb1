import FanoutAgents
import FanoutCore
import Foundation

/// Watches what a test process, and every process it starts, names on the file system while it runs: the files it
/// opens or looks at, the folders it lists, the programs it executes. What selective testing records as the run-time
/// inputs of the test targets that ran (docs/selective.md, "What is observed").
///
/// Two ways, the first that works here:
/// - **preload**: libFanoutObserve (Sources/FanoutObserve, installed beside fanout) is preloaded into the test process
///   (`LD_PRELOAD`); it writes down each path the process names through libc, and puts itself into every program the
///   process executes. Nearly free: no process stops. A program it cannot enter (static, set-user-ID) marks the unit
///   as not observed, and so does a test process that never loaded it (a static test binary).
/// - **strace** with a seccomp filter (`--seccomp-bpf`): the kernel stops the process at each file-system call and
///   at each new thread or process; `-f` follows every child, and `-y` names each call's folder, so a relative path
///   is known in full. It also sees direct system calls, but costs 15–24 % of a recording run's wall (BENCHMARKS.md).
///
/// It runs on local slots only: an SSH agent's paths are not the package's, and a test run there counts as not
/// observed (the safe rule).
struct RunTimeObserver: Sendable {
    enum Mechanism: Sendable, Hashable {
        /// The library to preload.
        case preload(String)
        /// The `strace` executable.
        case strace(String)
    }

    let mechanism: Mechanism
    /// Where each unit's traces go (one folder per unit, removed once read).
    let folder: String

    init(strace: String, folder: String) {
        self.mechanism = .strace(strace)
        self.folder = folder
    }

    init(preload library: String, folder: String) {
        self.mechanism = .preload(library)
        self.folder = folder
    }

    /// How it observes, for the report.
    var name: String {
        switch mechanism {
        case .preload: "a preloaded library"
        case .strace: "strace"
        }
    }

    /// The library's file name, and where it is looked for: `$FANOUT_OBSERVE_LIBRARY`, else beside the running
    /// executable (a build folder), else in `../lib/fanout/` from it (what scripts/install.sh installs).
    static let libraryName = "libFanoutObserve.so"

    static func libraryCandidates(executable: String = runningExecutable,
                                  environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        if let explicit = environment["FANOUT_OBSERVE_LIBRARY"], !explicit.isEmpty { return [explicit] }
        let bin = URL(fileURLWithPath: executable).deletingLastPathComponent()
        return [bin.appendingPathComponent(libraryName).path,
                bin.deletingLastPathComponent().appendingPathComponent("lib/fanout/\(libraryName)").path]
    }

    /// The running program, its links resolved.
    static var runningExecutable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? URL(fileURLWithPath: ProcessInfo.processInfo.arguments.first ?? "fanout").resolvingSymlinksInPath().path
    }

    /// An observer that works here (each way is tried on a real process first); else nil and why not.
    static func find(folder: String, choice: ObserverChoice = .any) async -> (RunTimeObserver?, String?) {
        var reasons: [String] = []
        if choice != .strace {
            let (found, why) = await findPreload(folder: folder)
            if let found { return (found, nil) }
            reasons.append(why)
        }
        if choice != .preload {
            let (found, why) = await findStrace(folder: folder)
            if let found { return (found, nil) }
            reasons.append(why)
        }
        return (nil, reasons.joined(separator: "; "))
    }

    private static func findPreload(folder: String) async -> (RunTimeObserver?, String) {
        #if os(Linux)
        let candidates = libraryCandidates()
        guard let library = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            return (nil, "\(libraryName) was not found (looked in \(candidates.joined(separator: ", ")))")
        }
        let observer = RunTimeObserver(preload: library, folder: folder)
        // A shell that looks at a file: the library must load and write it down.
        let probe = "\(folder)-probe"
        let (command, traces) = observer.observing(Command(executable: "/bin/sh", arguments: ["-c", "test -e \"$0\"", probe]))
        let (ending, _, err) = await LocalShell("selective").capture(command, timeout: 30)
        let seen = observer.paths(in: traces)
        guard case .exited = ending, let seen, seen.contains(probe) else {
            let text = String(decoding: err, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return (nil, "\(library) did not observe a shell (\(ending)\(text.isEmpty ? "" : ": " + text.prefix(200)))")
        }
        return (observer, "")
        #else
        return (nil, "the preloaded observer is for Linux only")
        #endif
    }

    private static func findStrace(folder: String) async -> (RunTimeObserver?, String) {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map { "\($0)/strace" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let path else {
            return (nil, "strace was not found (install it: apt-get install strace)")
        }
        let probe = Command(executable: path, arguments: ["-f", "-qq", "--seccomp-bpf", "-e", "trace=%file", "-o", "/dev/null",
                                                          "--", "/bin/true"])
        let (ending, out, err) = await LocalShell("selective").capture(probe, timeout: 30)
        guard case .exited(0) = ending else {
            let text = String(decoding: err + out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return (nil, "strace cannot trace here (\(ending)\(text.isEmpty ? "" : ": " + text.prefix(200)))")
        }
        return (RunTimeObserver(strace: path, folder: folder), "")
    }

    /// `command` run under observation, its traces written into a new folder (returned).
    func observing(_ command: Command) -> (Command, String) {
        let traces = "\(folder)/\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: true)
        switch mechanism {
        case .preload(let library):
            var environment = command.environment
            let before = environment["LD_PRELOAD"] ?? ProcessInfo.processInfo.environment["LD_PRELOAD"] ?? ""
            environment["LD_PRELOAD"] = before.isEmpty ? library : "\(library):\(before)"
            environment["FANOUT_OBSERVE_DIR"] = traces
            // The program that must be seen starting under the library (else the unit is not observed: a static
            // test binary never loads it, though the children it starts may).
            try? Data(Self.resolved(command.executable).utf8).write(to: URL(fileURLWithPath: "\(traces)/\(Self.rootFile)"))
            return (Command(executable: command.executable, arguments: command.arguments, environment: environment), traces)
        case .strace(let strace):
            let arguments = ["-f", "-ff", "-qq", "--seccomp-bpf", "-e", "trace=%file", "-e", "signal=none", "-y", "-x",
                             "-s", "65535", "-o", "\(traces)/t", "--", command.executable] + command.arguments
            return (Command(executable: strace, arguments: arguments, environment: command.environment), traces)
        }
    }

    /// In a unit's traces folder, the resolved path of the program it runs (preload).
    static let rootFile = ".root"

    /// `path` with its links resolved; a bare name is looked for on the PATH.
    static func resolved(_ path: String) -> String {
        var full = path
        if !path.contains("/") {
            full = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
                .map { "\($0)/\(path)" }.first { FileManager.default.isExecutableFile(atPath: $0) } ?? path
        }
        return URL(fileURLWithPath: full).resolvingSymlinksInPath().path
    }

    /// Every absolute path named in the traces of one unit; nil when the unit's own process was not seen under
    /// observation (no trace; for the preload, no start record of the program it runs), or the preloaded library
    /// saw something it could not follow, so that nothing is taken for observed that was not. The folder is removed.
    func paths(in traces: String) -> Set<String>? {
        defer { try? FileManager.default.removeItem(atPath: traces) }
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: traces)) ?? []).filter { !$0.hasPrefix(".") }
        guard !files.isEmpty else { return nil }
        var out: Set<String> = []
        var started: Set<String> = []
        for file in files {
            guard let data = FileManager.default.contents(atPath: "\(traces)/\(file)") else { return nil }
            switch mechanism {
            case .strace:
                out.formUnion(FileAccessTrace.paths(in: String(decoding: data, as: UTF8.self)))
            case .preload:
                guard let records = PreloadRecords.read(data) else { return nil }
                out.formUnion(records.paths)
                started.formUnion(records.started)
            }
        }
        if case .preload = mechanism {
            guard let root = FileManager.default.contents(atPath: "\(traces)/\(Self.rootFile)"),
                  started.contains(String(decoding: root, as: UTF8.self)) else { return nil }
        }
        return out
    }
}

/// Reads one process's records from the preloaded library (Sources/FanoutObserve/include/fanout_observe.h): a kind
/// byte, an absolute path, a NUL. `s` (started: the executable), `r` (named), `x` (executed) give paths; `!` (what it
/// could not follow) makes the whole unit unobserved: nil.
enum PreloadRecords {
    /// The paths named, and the executables of the processes that started under the library.
    static func read(_ data: Data) -> (paths: [String], started: [String])? {
        var paths: [String] = []
        var started: [String] = []
        for record in data.split(separator: 0, omittingEmptySubsequences: true) {
            guard let kind = record.first else { continue }
            let path = String(decoding: record.dropFirst(), as: UTF8.self)
            switch kind {
            case UInt8(ascii: "!"): return nil
            case UInt8(ascii: "s"), UInt8(ascii: "r"), UInt8(ascii: "x"):
                guard path.hasPrefix("/") else { return nil }
                paths.append(FileAccessTrace.normalized(path))
                if kind == UInt8(ascii: "s") { started.append(path) }
            default: return nil // a record this version cannot read
            }
        }
        return (paths, started)
    }
}

/// Reads the paths out of one process's `strace -y -x` output: each line is one call, e.g.
/// `openat(AT_FDCWD</pkg>, "Fixtures/a.json", O_RDONLY) = 3</pkg/Fixtures/a.json>`,
/// `execve("/pkg/.build/debug/math", ["math"], ...) = 0`, `access("/x", R_OK) = -1 ENOENT (...)`.
/// A path relative to a folder descriptor (`AT_FDCWD<…>` or `3<…>`) is made absolute with it; the path a
/// successful open resolved to (`= 3<…>`) counts too, so a link is seen as both.
enum FileAccessTrace {
    static func paths(in text: String) -> [String] {
        var out: [String] = []
        var cwd: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            var rest = Substring(line)
            guard let open = rest.firstIndex(of: "("), rest[..<open].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
            else { continue }
            rest = rest[rest.index(after: open)...]
            var folder: String?
            if let (annotated, after) = annotation(rest) {
                folder = annotated
                if rest.hasPrefix("AT_FDCWD") { cwd = annotated }
                rest = after.drop { $0 == "," || $0 == " " }
            }
            if rest.first == "\"", let (string, _) = quoted(rest) {
                if string.isEmpty {
                    if let folder { out.append(folder) }
                } else if string.hasPrefix("/") {
                    out.append(normalized(string))
                } else if let base = folder ?? cwd {
                    out.append(normalized(base + "/" + string))
                }
            }
            // `= 3</resolved/path>` at the end: what an open found.
            if let eq = line.range(of: ") = ", options: .backwards) {
                let result = line[eq.upperBound...].drop { $0.isNumber }
                if result.first == "<", let (resolved, _) = annotation(Substring("0" + result)) {
                    out.append(resolved)
                }
            }
        }
        return out
    }

    /// `AT_FDCWD</path>` or `12</path>` at the start: the path and what follows the `>`.
    private static func annotation(_ s: Substring) -> (String, Substring)? {
        let head = s.prefix { $0 != "<" }
        guard head == "AT_FDCWD" || (!head.isEmpty && head.allSatisfy(\.isNumber)) else { return nil }
        var i = s.index(s.startIndex, offsetBy: head.count)
        guard i < s.endIndex, s[i] == "<" else { return nil }
        i = s.index(after: i)
        guard let close = s[i...].firstIndex(of: ">") else { return nil }
        return (unescaped(s[i..<close]), s[s.index(after: close)...])
    }

    /// A C string literal at the start of `s` (strace's escapes undone), and what follows it.
    private static func quoted(_ s: Substring) -> (String, Substring)? {
        var i = s.index(after: s.startIndex)
        var raw = Substring()
        while i < s.endIndex {
            if s[i] == "\\" {
                i = s.index(after: i)
                guard i < s.endIndex else { return nil }
            } else if s[i] == "\"" {
                raw = s[s.index(after: s.startIndex)..<i]
                return (unescaped(raw), s[s.index(after: i)...])
            }
            i = s.index(after: i)
        }
        return nil
    }

    /// `\xHH`, `\ooo`, `\n`, `\t`, `\"`, `\\` and the like, as bytes, then UTF-8.
    static func unescaped(_ s: Substring) -> String {
        guard s.contains("\\") else { return String(s) }
        var bytes: [UInt8] = []
        var chars = Array(s.utf8)[...]
        while let c = chars.popFirst() {
            guard c == UInt8(ascii: "\\"), let e = chars.popFirst() else { bytes.append(c); continue }
            switch e {
            case UInt8(ascii: "x"):
                let hex = chars.prefix(2)
                chars = chars.dropFirst(hex.count)
                bytes.append(UInt8(String(decoding: hex, as: UTF8.self), radix: 16) ?? 0)
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                var digits = [e]
                while digits.count < 3, let d = chars.first, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(d) {
                    digits.append(d)
                    chars = chars.dropFirst()
                }
                bytes.append(UInt8(String(decoding: digits, as: UTF8.self), radix: 8) ?? 0)
            case UInt8(ascii: "n"): bytes.append(10)
            case UInt8(ascii: "t"): bytes.append(9)
            case UInt8(ascii: "r"): bytes.append(13)
            case UInt8(ascii: "v"): bytes.append(11)
            case UInt8(ascii: "f"): bytes.append(12)
            default: bytes.append(e)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `.` and `..` taken out, by the letters of the path (a link's target is seen through the resolved path).
    static func normalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." { continue }
            if part == ".." { _ = parts.popLast(); continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }
}

/// What the run observed of each test target on each destination: the paths its units named, or that some unit of
/// it ran where nothing could be observed (then the safe rule holds for it).
///
/// A unit leaves only the folder of its traces here; they are read once, after the run (``resolve(_:)``), so that
/// no slot waits for a trace to be read before it takes its next unit.
actor ObservedInputs {
    private var traces: [String: [String]] = [:]
    private var paths: [String: Set<String>] = [:]
    private var blind: Set<String> = []
    /// The products folders of the run (executables and resource bundles are named there).
    private(set) var productFolders: Set<String> = []

    private static func key(_ destination: String, _ module: String) -> String { "\(destination)\u{0}\(module)" }

    /// A unit of `modules` ended; `traces` is its traces' folder, nil when it was not observed.
    func unitEnded(modules: Set<String>, destination: String, traces folder: String?, productFolder: String) {
        productFolders.insert(productFolder)
        for module in modules {
            let k = Self.key(destination, module)
            if let folder { traces[k, default: []].append(folder) } else { blind.insert(k) }
        }
    }

    /// Reads every unit's traces, each folder once and several at a time; a folder `read` cannot read (the unit's
    /// process never started under the observer) leaves its targets unobserved.
    func resolve(_ read: @Sendable (String) -> Set<String>?) {
        let folders = Array(Set(traces.values.joined()))
        let byFolder = Dictionary(uniqueKeysWithValues: zip(folders, Parallel.map(folders, read)))
        for (k, list) in traces {
            for folder in list {
                if let seen = byFolder[folder] ?? nil { paths[k, default: []].formUnion(seen) } else { blind.insert(k) }
            }
        }
        traces = [:]
    }

    /// The paths every unit of this target named (once resolved); nil when any unit of it was not observed, or none
    /// ran.
    func observed(destination: String, module: String) -> Set<String>? {
        let k = Self.key(destination, module)
        return blind.contains(k) ? nil : paths[k]
    }
}

/// Observation in one run: how units are wrapped, and what they named.
struct RunTimeObservation: Sendable {
    let observer: RunTimeObserver
    /// The destinations whose targets selective testing covers: units elsewhere are not worth the cost.
    let destinations: Set<String>
    let inputs = ObservedInputs()
}
