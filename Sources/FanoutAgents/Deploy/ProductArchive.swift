import FanoutCore
import Foundation

/// A test product packed for agents: one tar archive whose SHA-256 is its address in every agent's cache.
public struct PackedProduct: Sendable, Hashable {
    public var archive: String
    public var sha256: String
    public var bytes: Int
    /// The binary's path inside the unpacked archive.
    public var binaryName: String
    public var files: [String]
}

/// Packs each product once per run, however many agents ask (one product per distinct build setting).
public actor ProductArchives {
    private var archives: [String: ProductArchive] = [:]

    public init() {}

    public func pack(_ product: TestProduct) async throws -> PackedProduct {
        let archive = archives[product.binary] ?? ProductArchive(product: product)
        archives[product.binary] = archive
        return try await archive.pack()
    }

    public func discard() async {
        for a in archives.values { await a.discard() }
    }
}

/// Packs the product once per run, however many agents ask: the binary, its `.resources` folders (tests that use
/// resources crash without them), the shared libraries beside it, and the other executables built with it (some
/// suites launch them). The archive is deterministic (sorted, fixed owners and times), so the same build has the
/// same address and a second run uploads nothing.
public actor ProductArchive {
    private let product: TestProduct
    private let scratch: String
    private var packed: Task<PackedProduct, any Error>?

    public init(product: TestProduct, scratch: String = NSTemporaryDirectory()) {
        self.product = product
        self.scratch = scratch
    }

    public func pack() async throws -> PackedProduct {
        if let packed { return try await packed.value }
        let task = Task { try await Self.make(product, scratch: scratch) }
        packed = task
        return try await task.value
    }

    /// The files that travel with the binary, relative to its folder.
    public static func members(of product: TestProduct) throws -> [String] {
        let fm = FileManager.default
        let binaryName = URL(fileURLWithPath: product.binary).lastPathComponent
        if let known = product.members { return [binaryName] + known.filter { $0 != binaryName } }
        var members = [binaryName]
        for name in try fm.contentsOfDirectory(atPath: product.directory).sorted() where name != binaryName {
            let path = product.directory + "/" + name
            var isDir: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &isDir) else { continue }
            if isDir.boolValue {
                if name.hasSuffix(".resources") { members.append(name) }
            } else if name.hasSuffix(".so") || name.contains(".so.") {
                members.append(name)
            } else if fm.isExecutableFile(atPath: path), !name.hasSuffix(".o"), !name.hasPrefix(".") {
                members.append(name)
            }
        }
        return members
    }

    /// Symbolic links among the members, inside `.resources` folders too: a link to something inside the product's
    /// folder is packed as what it points to (`tar --dereference`); a link that leads outside that folder, or
    /// nowhere, is refused, since agents would get a dangling link or a file from elsewhere on this machine. The
    /// binary itself may be a link anywhere: it is the product the user named.
    public static func checkLinks(_ members: [String], of product: TestProduct) throws(AgentError) {
        let fm = FileManager.default
        let folder = URL(fileURLWithPath: product.directory).resolvingSymlinksInPath().path
        func isLink(_ path: String) -> Bool {
            (try? fm.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeSymbolicLink
        }
        func check(_ path: String) throws(AgentError) {
            if isLink(path) {
                let target = (try? fm.destinationOfSymbolicLink(atPath: path)) ?? "?"
                let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
                guard fm.fileExists(atPath: path) else {
                    throw .deployFailed(agent: "(packing)", reason: "\(path) is a symbolic link to \(target), which does not "
                        + "exist. Remove the link, or rebuild the product")
                }
                guard resolved.hasPrefix(folder + "/") else {
                    throw .deployFailed(agent: "(packing)", reason: "\(path) is a symbolic link to \(target), outside the "
                        + "product folder \(product.directory): agents would not have it. Replace the link with a copy of "
                        + "the file (cp --remove-destination \"$(readlink -f '\(path)')\" '\(path)'), or remove it")
                }
            }
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return }
            for name in ((try? fm.contentsOfDirectory(atPath: path)) ?? []).sorted() { try check(path + "/" + name) }
        }
        for member in members.dropFirst() { try check(product.directory + "/" + member) }
    }

    static func make(_ product: TestProduct, scratch: String) async throws -> PackedProduct {
        let members = try members(of: product)
        try checkLinks(members, of: product)
        let archive = try privateArchivePath(in: scratch)
        let shell = LocalTransport(name: "pack", slots: 1)
        // A SwiftPM product's links are packed as what they point to; an app's folders keep theirs (a macOS
        // framework's `Versions/Current`), which `checkLinks` has kept inside the product folder.
        let dereference = product.members == nil ? ["--dereference"] : []
        let tar: Command
        if let gnu = Tools.gnuTar() {
            tar = Command(executable: gnu, arguments: [
                "--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner", "--format=gnu",
            ] + dereference + ["-cf", archive, "-C", product.directory, "--"] + members)
        } else {
            // macOS without GNU tar: bsdtar cannot sort nor fix times, so a rebuilt product may be sent again.
            tar = Command(executable: "/usr/bin/tar", arguments: ["--uid", "0", "--gid", "0", "--format", "gnutar"]
                + (dereference.isEmpty ? [] : ["-L"]) + ["-cf", archive, "-C", product.directory, "--"] + members)
        }
        let (ending, _, err) = await shell.capture(tar)
        guard ending == .exited(0) else {
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: archive).deletingLastPathComponent().path)
            throw AgentError.deployFailed(agent: "(packing)", reason: "tar failed (\(ending)): \(String(decoding: err, as: UTF8.self))")
        }
        let (sumEnding, out, _) = await shell.capture(Tools.sha256(archive))
        guard sumEnding == .exited(0), let sha = String(decoding: out, as: UTF8.self).split(separator: " ").first,
              sha.count == 64 else {
            throw AgentError.deployFailed(agent: "(packing)", reason: "sha256sum of \(archive) failed")
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: archive)[.size] as? Int) ?? 0
        return PackedProduct(archive: archive, sha256: String(sha), bytes: size,
                             binaryName: members[0], files: members)
    }

    /// A new, empty archive file (0600) in a folder of its own (0700, from mkdtemp) under `scratch`: nobody else on
    /// this machine can read the product or swap the archive between packing and uploading.
    static func privateArchivePath(in scratch: String) throws(AgentError) -> String {
        var template = Array((scratch.hasSuffix("/") ? scratch : scratch + "/").utf8CString.dropLast())
            + Array("fanout-pack-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
        guard let folder = made.map({ String(cString: $0) }) else {
            throw .deployFailed(agent: "(packing)", reason: "cannot create a private folder in \(scratch): "
                + "\(String(cString: strerror(errno))). Make the temporary folder writable (or set TMPDIR)")
        }
        let archive = folder + "/product.tar"
        let fd = open(archive, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else {
            throw .deployFailed(agent: "(packing)", reason: "cannot create \(archive): \(String(cString: strerror(errno)))")
        }
        close(fd)
        return archive
    }

    /// Removes the local archive and its private folder.
    public func discard() async {
        if let packed, let p = try? await packed.value {
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: p.archive).deletingLastPathComponent().path)
        }
    }
}

/// The local tools packing uses, wherever the coordinator's OS keeps them.
enum Tools {
    /// GNU tar (deterministic archives): `/bin/tar` on Linux, Homebrew's `gtar` on macOS.
    static func gnuTar() -> String? {
        let fm = FileManager.default
        #if os(Linux)
        if fm.isExecutableFile(atPath: "/bin/tar") { return "/bin/tar" }
        #endif
        return ["/opt/homebrew/bin/gtar", "/usr/local/bin/gtar", "/usr/bin/gtar"].first { fm.isExecutableFile(atPath: $0) }
    }

    /// The SHA-256 of a file, printed first on the line: coreutils' `sha256sum`, or `shasum -a 256` (macOS).
    static func sha256(_ path: String) -> Command {
        let fm = FileManager.default
        for candidate in ["/usr/bin/sha256sum", "/bin/sha256sum"] where fm.isExecutableFile(atPath: candidate) {
            return Command(executable: candidate, arguments: [path])
        }
        return Command(executable: "/usr/bin/shasum", arguments: ["-a", "256", path])
    }
}
