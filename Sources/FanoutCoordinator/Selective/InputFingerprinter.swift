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
    static let ignoredFolders: Set<String> = [".build", ".git", ".swiftpm", ".DS_Store", ".fanout"]

    /// The keys of run-time inputs (Core's, where the record is read back).
    static let runTimeKey = TargetFingerprint.runTimeKey
    static let observedPrefix = TargetFingerprint.observedPrefix
    static let builtPrefix = TargetFingerprint.builtPrefix
    /// The safe rule's input: every file of the package outside the target's closure, but other test targets' sources.
    static let packageFilesKey = "package files"

    /// Every test target's fingerprint on each destination, under the safe rule (nothing observed yet).
    func fingerprints(for destinations: [DestinationSpec]) throws(FanoutError) -> [TargetFingerprint] {
        var folders = FolderDigests(root: package)
        return try measure(destinations, folders: &folders)
    }

    /// The fingerprints under the safe rule: what a target's run-time inputs are when nothing was observed.
    func measure(_ destinations: [DestinationSpec], folders: inout FolderDigests) throws(FanoutError) -> [TargetFingerprint] {
        let manifests = try manifestDigest()
        let resolved = try externalDigest(&folders)
        let declared = try DeclaredInputs(root: package, patterns: settings.selective.inputs).digest()
        var out: [TargetFingerprint] = []
        for target in graph.testTargets {
            var common: [String: String] = [
                "Package.swift": manifests,
                "toolchain": SHA256.hex(toolchain),
                "Fanout version": SHA256.hex(Coordinator.version),
                // Anything of the package a test can reach at run time (an executable it runs from the products
                // folder, a fixture it opens by a path made from #filePath) changes it, until observation narrows it.
                Self.runTimeKey: "assumed",
                "Package.resolved": resolved,
            ]
            let closure = graph.closure(of: target)
            for t in closure { common["files of \(t.name)"] = try folders.digest(t.path) }
            // Build tool plugins are used without being dependencies in the graph SwiftPM prints: every target
            // counts every plugin in.
            for plugin in graph.targets where plugin.type == "plugin" {
                common["files of \(plugin.name)"] = try folders.digest(plugin.path)
            }
            let otherTests = graph.testTargets.filter { t in !closure.contains { $0.name == t.name } }.map(\.path)
            common[Self.packageFilesKey] = try folders.packageFiles(outside: closure.map(\.path), sourcesOf: otherTests)
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
        return out
    }

    /// What is known of a target whatever its tests do at run time: the safe rule's parts less the rule itself (and
    /// less the pins, unless the target's own code uses another package).
    func base(of fingerprint: TargetFingerprint) -> [String: String] {
        var parts = fingerprint.parts
        parts[Self.packageFilesKey] = nil
        parts[Self.runTimeKey] = nil
        let target = graph.targets.first { $0.name == fingerprint.target }
        let usesPackages = target.map { graph.closure(of: $0).contains { !($0.productDependencies ?? []).isEmpty } } ?? true
        if !usesPackages { parts["Package.resolved"] = nil }
        return parts
    }

    /// The fingerprint of a target whose every unit ran observed and named `paths`: its base, and each path of the
    /// package it named (files by their bytes, folders by their names, absent paths as absent); an executable or a
    /// resource bundle of the products folder counts as the files of the targets it is built from.
    func observed(_ fingerprint: TargetFingerprint, paths: Set<String>, productFolders: Set<String>,
                  folders: inout FolderDigests) throws(FanoutError) -> TargetFingerprint {
        var parts = base(of: fingerprint)
        parts[Self.runTimeKey] = "observed"
        let closure = graph.targets.first { $0.name == fingerprint.target }.map { graph.closure(of: $0).map(\.path) } ?? []
        let roots = Set([package, FolderDigests.realPath(package)])
        for path in paths {
            switch ObservedPath.classify(path, roots: roots, productFolders: productFolders, closure: closure, graph: graph) {
            case .ignored: continue
            case .file(let relative): parts[Self.observedPrefix + relative] = folders.state(package + "/" + relative)
            case .pins: parts["Package.resolved"] = try externalDigest(&folders)
            case .built(let name): parts[Self.builtPrefix + name] = try builtDigest(name, folders: &folders)
            }
        }
        return TargetFingerprint(target: fingerprint.target, module: fingerprint.module, destination: fingerprint.destination,
                                 parts: parts)
    }

    /// A product the tests ran or read (`built math`): the files of every target it is built from, and the pins when
    /// any of them uses another package. A product no target builds any more has a digest of its own.
    func builtDigest(_ name: String, folders: inout FolderDigests) throws(FanoutError) -> String {
        let targets = graph.targets(producing: name)
        guard !targets.isEmpty else { return "(no target builds it)" }
        var hash = SHA256()
        for t in targets { hash.update("\(t.name)\u{0}\(try folders.digest(t.path))\n") }
        if targets.contains(where: { !($0.productDependencies ?? []).isEmpty }) { hash.update(try externalDigest(&folders)) }
        return hash.hex()
    }

    /// The fingerprint to compare with a recorded run: its own kind. A run recorded with observed inputs is compared
    /// on the same inputs as they are now; any other on the safe rule.
    func current(_ fingerprint: TargetFingerprint, against row: TargetRun,
                 folders: inout FolderDigests) throws(FanoutError) -> TargetFingerprint {
        guard row.parts[Self.runTimeKey] == "observed" else { return fingerprint }
        var parts = base(of: fingerprint)
        parts[Self.runTimeKey] = "observed"
        for key in row.parts.keys where parts[key] == nil {
            if key.hasPrefix(Self.observedPrefix) {
                parts[key] = folders.state(package + "/" + key.dropFirst(Self.observedPrefix.count))
            } else if key.hasPrefix(Self.builtPrefix) {
                parts[key] = try builtDigest(String(key.dropFirst(Self.builtPrefix.count)), folders: &folders)
            } else if key == "Package.resolved" {
                parts[key] = try externalDigest(&folders)
            }
        }
        return TargetFingerprint(target: fingerprint.target, module: fingerprint.module, destination: fingerprint.destination,
                                 parts: parts)
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
    func externalDigest(_ folders: inout FolderDigests) throws(FanoutError) -> String {
        var hash = SHA256()
        let resolved = package + "/Package.resolved"
        hash.update(FileManager.default.fileExists(atPath: resolved) ? try folders.fileDigest(resolved) : "no Package.resolved")
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

/// Digests of whole folders (every file under them, by relative path), of single files and of observed paths, each
/// computed once per run.
struct FolderDigests {
    let root: String
    private var known: [String: String] = [:]
    private var fileDigests: [String: String] = [:]
    private var states: [String: String] = [:]
    private var packageList: [String]?
    /// Files hashed so far.
    private(set) var files = 0

    init(root: String) { self.root = root }

    /// `path` is relative to the root, or absolute. A folder that does not exist has a digest of its own; a broken
    /// symbolic link in it is an error (what it pointed to cannot be hashed, so nothing may be skipped on it).
    mutating func digest(_ path: String) throws(FanoutError) -> String {
        let full = path.hasPrefix("/") ? path : root + "/" + path
        if let d = known[full] { return d }
        var hash = SHA256()
        var broken: [String] = []
        let files = FileWalk.files(under: full, broken: &broken)
        try Self.refuse(broken, in: full)
        if files.isEmpty { hash.update("(empty or missing folder)") }
        for file in files { hash.update("\(file)\u{0}\(try fileDigest(full + "/" + file))\n") }
        let d = hash.hex()
        known[full] = d
        return d
    }

    /// A file's digest, read once per run however many targets count it.
    mutating func fileDigest(_ full: String) throws(FanoutError) -> String {
        if let d = fileDigests[full] { return d }
        let d = try FileDigest.of(full)
        fileDigests[full] = d
        files += 1
        return d
    }

    /// The safe rule's input of one target: every file of the package (build output and VCS data aside) outside the
    /// folders of its closure (hashed on their own), less the Swift sources of the other test targets (compiled
    /// into the same test binary, they are not run by this target's tests; their other files, fixtures among them,
    /// count).
    mutating func packageFiles(outside closure: [String], sourcesOf otherTests: [String]) throws(FanoutError) -> String {
        if packageList == nil {
            var broken: [String] = []
            packageList = FileWalk.files(under: root, broken: &broken)
            try Self.refuse(broken, in: root)
        }
        func folder(_ path: String) -> String {
            var p = path.hasPrefix("/") && path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : path
            while p.hasPrefix("./") { p.removeFirst(2) }
            while p.hasSuffix("/") { p.removeLast() }
            return p
        }
        let inside = closure.map(folder)
        let tests = otherTests.map(folder)
        func under(_ file: String, _ folders: [String]) -> Bool {
            folders.contains { $0.isEmpty || $0 == "." || file.hasPrefix($0 + "/") }
        }
        var hash = SHA256()
        for file in packageList ?? [] where !under(file, inside) {
            if file.hasSuffix(".swift"), under(file, tests) { continue }
            // The manifests and the pins are inputs of their own (the pins are read again after the build).
            if !file.contains("/"), file == "Package.resolved" || (file.hasPrefix("Package") && file.hasSuffix(".swift")) { continue }
            hash.update("\(file)\u{0}\(try fileDigest(root + "/" + file))\n")
        }
        return hash.hex()
    }

    /// What an observed path is now: a file's bytes, a folder's names, `absent`.
    mutating func state(_ full: String) -> String {
        if let s = states[full] { return s }
        var info = stat()
        let s: String
        if stat(full, &info) != 0 {
            s = errno == ENOENT || errno == ENOTDIR ? "absent" : "unreadable (\(String(cString: strerror(errno))))"
        } else if (info.st_mode & S_IFMT) == S_IFDIR {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: full)) ?? [])
                .filter { !InputFingerprinter.ignoredFolders.contains($0) }.sorted()
            s = "folder " + SHA256.hex(names.joined(separator: "\n"))
        } else if (info.st_mode & S_IFMT) == S_IFREG {
            do {
                s = try fileDigest(full)
            } catch {
                s = "unreadable"
            }
        } else {
            s = "other"
        }
        states[full] = s
        return s
    }

    /// The path with every symbolic link resolved (itself when it cannot be).
    static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func refuse(_ broken: [String], in folder: String) throws(FanoutError) {
        guard let first = broken.first else { return }
        throw FanoutError("selective testing found a broken symbolic link, \(folder)/\(first)"
                          + (broken.count > 1 ? " (and \(broken.count - 1) more)" : ""),
                          hint: "Fix or remove it: what it pointed to cannot be hashed, so no test target may be skipped on it.",
                          exitCode: .infrastructure)
    }
}

/// Where a path a test process named belongs, for its target's observed inputs.
enum ObservedPath: Equatable {
    /// Outside the package, inside the target's own closure (hashed already), a manifest, build output or VCS data.
    case ignored
    /// A path of the package, relative to its root: hashed by what it is now.
    case file(String)
    /// Under the build folder's checkouts: the pins and local dependencies.
    case pins
    /// An executable or a resource bundle of the products folder, by its name there.
    case built(String)

    static func classify(_ path: String, roots: Set<String>, productFolders: Set<String>, closure: [String],
                         graph: PackageGraph) -> ObservedPath {
        for folder in productFolders where path.hasPrefix(folder + "/") {
            return built(path.dropFirst(folder.count + 1).split(separator: "/"), graph: graph)
        }
        guard let root = roots.first(where: { path.hasPrefix($0 + "/") }) else { return .ignored }
        let relative = String(path.dropFirst(root.count + 1))
        let first = relative.prefix { $0 != "/" }
        if first == ".build" { return built(relative.split(separator: "/").dropFirst(), graph: graph) }
        if InputFingerprinter.ignoredFolders.contains(String(first)) { return .ignored }
        if !relative.contains("/"), relative.hasPrefix("Package"), relative.hasSuffix(".swift") { return .ignored }
        let inside = closure.contains { folder in
            let f = folder.hasPrefix("./") ? String(folder.dropFirst(2)) : folder
            return f.isEmpty || f == "." || relative == f || relative.hasPrefix(f + "/")
        }
        return inside ? .ignored : .file(relative)
    }

    /// A path inside a build folder: the first component that names a product or a resource bundle.
    private static func built<C: Collection>(_ components: C, graph: PackageGraph) -> ObservedPath where C.Element == Substring {
        if components.contains(where: { $0 == "checkouts" || $0 == "repositories" }) { return .pins }
        for c in components where !graph.targets(producing: String(c)).isEmpty { return .built(String(c)) }
        return .ignored
    }
}

/// Regular files under a folder, by path relative to it, in a stable order; build output and VCS folders are left out.
///
/// Read with `readdir`, whose entries carry their type: Foundation's URL enumerator with resource values took 0.15 s
/// for 2,000 files here, ten times the reading and hashing of them. Symbolic links are followed.
enum FileWalk {
    static func files(under folder: String) -> [String] {
        var broken: [String] = []
        return files(under: folder, broken: &broken)
    }

    /// The same; `broken` gets the symbolic links that point nowhere.
    static func files(under folder: String, broken: inout [String]) -> [String] {
        var out: [String] = []
        var seen: Set<[UInt64]> = []
        walk(folder, relative: "", into: &out, broken: &broken, seen: &seen)
        return out.sorted()
    }

    /// `seen`: the folders walked (device and inode), so a symbolic link back up the tree is not walked forever.
    private static func walk(_ folder: String, relative: String, into out: inout [String], broken: inout [String],
                             seen: inout Set<[UInt64]>) {
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
                if !InputFingerprinter.ignoredFolders.contains(name) { walk(path, relative: mine, into: &out, broken: &broken, seen: &seen) }
            case Int32(DT_REG):
                out.append(mine)
            default:
                // A symbolic link counts as what it points to (its bytes, or its folder's files, are what the build
                // reads); sockets and pipes are not files; a file system that does not say (DT_UNKNOWN) is asked.
                var info = stat()
                guard stat(path, &info) == 0 else {
                    if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK { broken.append(mine) }
                    continue
                }
                if (info.st_mode & S_IFMT) == S_IFREG, access(path, R_OK) == 0 {
                    out.append(mine)
                } else if (info.st_mode & S_IFMT) == S_IFDIR, !InputFingerprinter.ignoredFolders.contains(name) {
                    walk(path, relative: mine, into: &out, broken: &broken, seen: &seen)
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
