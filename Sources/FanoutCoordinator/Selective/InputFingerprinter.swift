import FanoutCore
import Foundation

/// Hashes everything each test target of a package can depend on (docs/selective.md, "What is hashed"):
/// - `files of X`: every file under the folder of the target and of each target it depends on, transitively (sources
///   and resources, whatever SwiftPM compiles or copies: a file it ignores is hashed too, which costs a needless run
///   at worst, never a false skip);
/// - `Package.swift`: every `Package*.swift` manifest of the root;
/// - `Package.resolved`, and the files of every local (path) dependency, for targets that use any product of
///   another package (SwiftPM does not say which package a product comes from, and packages depend on each other,
///   so a changed pin re-runs every target that uses any dependency; targets of local code alone keep their skips);
/// - `toolchain` (`swift --version`), `build settings` (configuration and flags), `destination` (its name,
///   environment, arguments and runner), `Fanout version`;
/// - `declared inputs`: the files of `selective.inputs` and of the target's `target_inputs` (with the patterns).
struct InputFingerprinter {
    let package: String
    let graph: PackageGraph
    let toolchain: String
    let settings: RunSettings
    /// Folders never hashed: build output, VCS data, editor state.
    static let ignoredFolders: Set<String> = [".build", ".git", ".swiftpm", ".DS_Store"]

    /// Every test target's fingerprint on each destination.
    func fingerprints(for destinations: [DestinationSpec]) throws(FanoutError) -> [TargetFingerprint] {
        try measure(destinations).fingerprints
    }

    /// The fingerprints, and how many files of target folders were hashed.
    func measure(_ destinations: [DestinationSpec]) throws(FanoutError) -> (fingerprints: [TargetFingerprint], files: Int) {
        var folders = FolderDigests(root: package)
        let manifests = try manifestDigest()
        let resolved = try externalDigest(&folders)
        let declared = try DeclaredInputs(root: package, patterns: settings.selective.inputs).digest()
        var out: [TargetFingerprint] = []
        for target in graph.testTargets {
            var common: [String: String] = [
                "Package.swift": manifests,
                "toolchain": SHA256.hex(toolchain),
                "Fanout version": SHA256.hex(Coordinator.version),
            ]
            let closure = graph.closure(of: target)
            for t in closure { common["files of \(t.name)"] = try folders.digest(t.path) }
            // Build tool plugins are used without being dependencies in the graph SwiftPM prints: every target
            // counts every plugin in.
            for plugin in graph.targets where plugin.type == "plugin" {
                common["files of \(plugin.name)"] = try folders.digest(plugin.path)
            }
            if closure.contains(where: { !($0.productDependencies ?? []).isEmpty }) {
                common["Package.resolved"] = resolved
            }
            let own = settings.selective.targetInputs[target.name] ?? []
            if !settings.selective.inputs.isEmpty || !own.isEmpty {
                var hash = SHA256()
                hash.update(declared)
                hash.update(try DeclaredInputs(root: package, patterns: own).digest())
                common["declared inputs"] = hash.hex()
            }
            for spec in destinations {
                var parts = common
                let build = settings.buildSettings(for: spec)
                parts["build settings"] = SHA256.hex(([build.configuration] + build.buildFlags).joined(separator: "\u{0}"))
                parts["destination"] = Self.destinationDigest(spec)
                out.append(TargetFingerprint(target: target.name, module: target.c99name, destination: spec.name, parts: parts))
            }
        }
        return (out, folders.files)
    }

    static func destinationDigest(_ spec: DestinationSpec) -> String {
        let d = spec.destination
        var lines = ["name=\(d.name)"]
        lines += d.environment.sorted { $0.key < $1.key }.map { "env \($0.key)=\($0.value)" }
        lines += d.arguments.map { "arg \($0)" }
        lines += spec.frameworks.map(\.rawValue).sorted().map { "runner \($0)" }
        if let list = spec.testsList { lines.append("tests_list \(list)") }
        return SHA256.hex(lines.joined(separator: "\n"))
    }

    /// Every `Package*.swift` of the root (`Package@swift-6.0.swift` and the like are manifests too).
    private func manifestDigest() throws(FanoutError) -> String {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: package)) ?? [])
            .filter { $0.hasPrefix("Package") && $0.hasSuffix(".swift") }.sorted()
        var hash = SHA256()
        for name in names { hash.update("\(name)\u{0}\(try FileDigest.of(package + "/" + name))\n") }
        return hash.hex()
    }

    /// Package.resolved and the files of every local dependency.
    private func externalDigest(_ folders: inout FolderDigests) throws(FanoutError) -> String {
        var hash = SHA256()
        let resolved = package + "/Package.resolved"
        hash.update(FileManager.default.fileExists(atPath: resolved) ? try FileDigest.of(resolved) : "no Package.resolved")
        for dependency in graph.dependencies.sorted(by: { $0.identity < $1.identity }) where dependency.type == "fileSystem" {
            guard let path = dependency.path else { continue }
            hash.update("\n\(dependency.identity)\u{0}\(try folders.digest(path))")
        }
        return hash.hex()
    }
}

/// The digest of a file's bytes.
enum FileDigest {
    /// Read in 64 KiB pieces into one buffer: most inputs are small source files, where a buffer allocated per read
    /// (or per file) costs more than hashing them; a large resource never sits in memory whole.
    static func of(_ path: String) throws(FanoutError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw FanoutError("selective testing cannot read \(path): \(String(cString: strerror(errno)))",
                              hint: "Make it readable, or run without --selective.", exitCode: .infrastructure)
        }
        defer { close(fd) }
        var hash = SHA256()
        let failed: Int32? = withUnsafeTemporaryAllocation(byteCount: 1 << 16, alignment: 16) { buffer in
            while true {
                let n = read(fd, buffer.baseAddress, buffer.count)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                if n == 0 { return nil }
                hash.update(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
            }
        }
        if let failed {
            throw FanoutError("selective testing cannot read \(path): \(String(cString: strerror(failed)))",
                              exitCode: .infrastructure)
        }
        return hash.hex()
    }
}

/// Digests of whole folders (every file under them, by relative path), each computed once per run.
struct FolderDigests {
    let root: String
    private var known: [String: String] = [:]
    /// Files hashed so far.
    private(set) var files = 0

    init(root: String) { self.root = root }

    /// `path` is relative to the root, or absolute. A folder that does not exist has a digest of its own.
    mutating func digest(_ path: String) throws(FanoutError) -> String {
        let full = path.hasPrefix("/") ? path : root + "/" + path
        if let d = known[full] { return d }
        var hash = SHA256()
        let files = FileWalk.files(under: full)
        if files.isEmpty { hash.update("(empty or missing folder)") }
        for file in files { hash.update("\(file)\u{0}\(try FileDigest.of(full + "/" + file))\n") }
        self.files += files.count
        let d = hash.hex()
        known[full] = d
        return d
    }
}

/// Regular files under a folder, by path relative to it, in a stable order; build output and VCS folders are left out.
///
/// Read with `readdir`, whose entries carry their type: Foundation's URL enumerator with resource values took 0.15 s
/// for 2,000 files here, ten times the reading and hashing of them. Symbolic links are followed.
enum FileWalk {
    static func files(under folder: String) -> [String] {
        var out: [String] = []
        var seen: Set<[UInt64]> = []
        walk(folder, relative: "", into: &out, seen: &seen)
        return out.sorted()
    }

    /// `seen`: the folders walked (device and inode), so a symbolic link back up the tree is not walked forever.
    private static func walk(_ folder: String, relative: String, into out: inout [String], seen: inout Set<[UInt64]>) {
        var me = stat()
        guard stat(folder, &me) == 0, seen.insert([UInt64(me.st_dev), UInt64(me.st_ino)]).inserted,
              let dir = opendir(folder) else { return }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            guard name != ".", name != "..", name != ".DS_Store" else { continue }
            let path = folder + "/" + name
            let mine = relative.isEmpty ? name : relative + "/" + name
            switch Int32(entry.pointee.d_type) {
            case Int32(DT_DIR):
                if !InputFingerprinter.ignoredFolders.contains(name) { walk(path, relative: mine, into: &out, seen: &seen) }
            case Int32(DT_REG):
                out.append(mine)
            default:
                // A symbolic link counts as what it points to (its bytes, or its folder's files, are what the build
                // reads); sockets and pipes are not files; a file system that does not say (DT_UNKNOWN) is asked.
                var info = stat()
                guard stat(path, &info) == 0 else { continue }
                if (info.st_mode & S_IFMT) == S_IFREG, access(path, R_OK) == 0 {
                    out.append(mine)
                } else if (info.st_mode & S_IFMT) == S_IFDIR, !InputFingerprinter.ignoredFolders.contains(name) {
                    walk(path, relative: mine, into: &out, seen: &seen)
                }
            }
        }
    }
}

/// The files matched by `selective: inputs:` globs: relative to the package (or absolute), where `*` and `?` stay
/// within a folder and `**` spans any number of folders; a pattern without wildcards names a file or a whole folder.
struct DeclaredInputs {
    let root: String
    let patterns: [String]

    func digest() throws(FanoutError) -> String {
        var hash = SHA256()
        for pattern in patterns {
            hash.update("pattern \(pattern)\n")
            for file in try matches(pattern) { hash.update("\(file)\u{0}\(try FileDigest.of(file))\n") }
        }
        return hash.hex()
    }

    /// Absolute paths of the files `pattern` matches, sorted.
    func matches(_ pattern: String) throws(FanoutError) -> [String] {
        let full = pattern.hasPrefix("/") ? pattern : root + "/" + pattern
        let wild = full.firstIndex { $0 == "*" || $0 == "?" }
        guard let wild else {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: full, isDirectory: &isFolder) else { return [] }
            return isFolder.boolValue ? FileWalk.files(under: full).map { full + "/" + $0 } : [full]
        }
        // Walk from the last folder before the first wildcard.
        let base = String(full[..<wild]).split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let regex: Regex<AnyRegexOutput>
        do {
            regex = try Regex(Self.regex(String(full.dropFirst(base.count + 1))))
        } catch {
            throw FanoutError("selective testing: the input pattern '\(pattern)' is not a valid glob: \(error)",
                              hint: "Use *, ? and ** (e.g. Tests/Fixtures/**/*.json).")
        }
        return FileWalk.files(under: base).filter { (try? regex.wholeMatch(in: $0)) != nil }.map { base + "/" + $0 }
    }

    /// `**/` any folders, `**` anything, `*` anything within a folder, `?` one character within a folder.
    static func regex(_ glob: String) -> String {
        var out = ""
        var chars = Array(glob)[...]
        while let c = chars.popFirst() {
            switch c {
            case "*":
                if chars.first == "*" {
                    chars.removeFirst()
                    if chars.first == "/" {
                        chars.removeFirst()
                        out += "(?:.*/)?"
                    } else {
                        out += ".*"
                    }
                } else {
                    out += "[^/]*"
                }
            case "?": out += "[^/]"
            default:
                out += "\\.^$|()[]{}+\\".contains(c) ? "\\\(c)" : String(c)
            }
        }
        return out
    }
}
