import FanoutAgents
@testable import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// How selective testing observes what tests use at run time: strace's output read back into paths (lines captured
/// from strace 6.1 here), the paths sorted into a target's inputs, and a real traced process whose files, folders,
/// absent paths and executed programs are all seen, with its exit status unchanged.
@Suite("Selective testing: observing run-time inputs")
struct RunTimeObserverTests {
    @Test func traceLinesGiveAbsolutePaths() {
        let trace = #"""
        execve("/pkg/.build/debug/PkgPackageTests.xctest", ["/pkg/.build/debug/PkgPackageTests.xctest", "A.B"], 0x7ffc /* 35 vars */) = 0
        access("/etc/ld.so.preload", R_OK)      = -1 ENOENT (No such file or directory)
        openat(AT_FDCWD</work>, "/etc/ld.so.cache", O_RDONLY|O_CLOEXEC) = 3</etc/ld.so.cache>
        newfstatat(3</etc/ld.so.cache>, "", {st_mode=S_IFREG|0644, st_size=33519, ...}, AT_EMPTY_PATH) = 0
        openat(AT_FDCWD</work>, "Fixtures/../Golden/a.txt", O_RDONLY) = 3</pkg/Golden/a.txt>
        openat(AT_FDCWD</pkg>, "missing.json", O_RDONLY|O_CLOEXEC) = -1 ENOENT (No such file or directory)
        openat(4</pkg/Tests/Data>, "x\x20y.txt", O_RDONLY) = 5</pkg/Tests/Data/x y.txt>
        newfstatat(AT_FDCWD</pkg>, "/pkg/caf\xc3\xa9\n.txt", 0x7ffc94c75960, 0) = -1 ENOENT (No such file or directory)
        +++ exited with 0 +++
        """#
        let paths = FileAccessTrace.paths(in: trace)
        #expect(paths.contains("/pkg/.build/debug/PkgPackageTests.xctest"), "an executed program")
        #expect(paths.contains("/etc/ld.so.preload"))
        #expect(paths.contains("/work/Golden/a.txt"), "relative to the folder the call names, by its letters")
        #expect(paths.contains("/pkg/Golden/a.txt"), "and where the open resolved it")
        #expect(paths.contains("/pkg/missing.json"), "an absent path counts: a file that appears later is a change")
        #expect(paths.contains("/pkg/Tests/Data/x y.txt"))
        #expect(paths.contains("/pkg/café\n.txt"), "strace's escapes undone")
        #expect(!paths.contains { $0.isEmpty || $0.contains("+++") })
    }

    @Test func pathsAreSortedIntoATargetsInputs() throws {
        let json = #"""
        {"name":"Pkg","path":"/pkg","dependencies":[],
         "products":[{"name":"math","targets":["Math"]}],
         "targets":[
           {"name":"Math","c99name":"Math","type":"executable","path":"Sources/Math","target_dependencies":["Core"]},
           {"name":"Core","c99name":"Core","type":"library","path":"Sources/Core"},
           {"name":"tool","c99name":"tool","type":"executable","path":"Sources/tool"},
           {"name":"MathTests","c99name":"MathTests","type":"test","path":"Tests/MathTests"}]}
        """#
        let graph = try PackageGraph.decode(Data(json.utf8), package: "/pkg")
        func classify(_ path: String) -> ObservedPath {
            ObservedPath.classify(path, roots: ["/pkg", "/real/pkg"], productFolders: ["/cache/bin"],
                                  closure: ["Tests/MathTests"], graph: graph)
        }
        #expect(classify("/pkg/.build/x86_64-unknown-linux-gnu/debug/math") == .built("math"), "a product, by its name")
        #expect(classify("/cache/bin/tool") == .built("tool"), "an executable target is a product of its own")
        #expect(classify("/pkg/.build/debug/Pkg_Core.resources/data.json") == .built("Pkg_Core.resources"))
        #expect(graph.targets(producing: "math").map(\.name) == ["Core", "Math"], "with what it is built from")
        #expect(classify("/pkg/.build/checkouts/dep/Sources/a.swift") == .pins)
        #expect(classify("/pkg/.build/debug/PkgPackageTests.xctest") == .ignored, "the test binary is the graph's")
        #expect(classify("/pkg/Fixtures/in.json") == .file("Fixtures/in.json"))
        #expect(classify("/real/pkg/Sources/Core/data.txt") == .file("Sources/Core/data.txt"), "through the resolved root")
        #expect(classify("/pkg/Tests/MathTests/golden.txt") == .ignored, "its own folders are hashed whole")
        #expect(classify("/pkg/Package.swift") == .ignored)
        #expect(classify("/pkg/.git/HEAD") == .ignored)
        #expect(classify("/pkgother/x") == .ignored)
        #expect(classify("/usr/lib/libc.so.6") == .ignored)
    }

    @Test func aTargetIsObservedOnlyWhenEveryUnitOfItWas() async throws {
        let dir = try TempDir()
        func traces(_ name: String, _ lines: [String]) throws -> String {
            try FileManager.default.createDirectory(atPath: dir.file(name), withIntermediateDirectories: true)
            try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: dir.file("\(name)/t.1")))
            return dir.file(name)
        }
        let inputs = ObservedInputs()
        await inputs.unitEnded(modules: ["A", "B"], destination: "local", traces: try traces("u1", [#"openat(AT_FDCWD</p>, "x", O_RDONLY) = -1 ENOENT"#]),
                               productFolder: "/p/.build/debug")
        await inputs.unitEnded(modules: ["A"], destination: "local", traces: try traces("u2", [#"access("/p/y", R_OK) = 0"#]),
                               productFolder: "/p/.build/debug")
        // B's other unit ran where nothing is observed (an SSH agent, a unit measuring performance).
        await inputs.unitEnded(modules: ["B"], destination: "local", traces: nil, productFolder: "/p/.build/debug")
        // C's unit was to be observed, but its process left no trace (it never started under strace).
        try FileManager.default.createDirectory(atPath: dir.file("u3"), withIntermediateDirectories: true)
        await inputs.unitEnded(modules: ["C"], destination: "local", traces: dir.file("u3"), productFolder: "/p/.build/debug")
        let observer = RunTimeObserver(strace: "/usr/bin/strace", folder: dir.path)
        await inputs.resolve { observer.paths(in: $0) }
        #expect(await inputs.observed(destination: "local", module: "A") == ["/p/x", "/p/y"])
        #expect(await inputs.observed(destination: "local", module: "B") == nil)
        #expect(await inputs.observed(destination: "other", module: "A") == nil, "per destination")
        #expect(await inputs.observed(destination: "local", module: "C") == nil, "no trace: not observed")
        #expect(await inputs.observed(destination: "local", module: "D") == nil, "never ran: not observed")
        #expect(await inputs.productFolders == ["/p/.build/debug"])
    }

    @Test(arguments: [ObserverChoice.preload, .strace])
    func aProcessIsSeenWholeAndEndsAsItWould(_ choice: ObserverChoice) async throws {
        let dir = try TempDir()
        let (found, why) = await RunTimeObserver.find(folder: dir.file("traces"), choice: choice)
        let observer = try #require(found, "\(choice) must be usable here (scripts/test.sh builds the library, scripts/setup.sh installs strace): \(why ?? "")")
        try FileManager.default.createDirectory(atPath: dir.file("pkg/Fixtures/deep"), withIntermediateDirectories: true)
        try Data("42\n".utf8).write(to: URL(fileURLWithPath: dir.file("pkg/Fixtures/in.txt")))
        try Data("7\n".utf8).write(to: URL(fileURLWithPath: dir.file("pkg/Fixtures/deep/more.txt")))
        try Data("1\n".utf8).write(to: URL(fileURLWithPath: dir.file("pkg/alone.txt")))
        let script = "cat \(dir.file("pkg/Fixtures/in.txt")) >/dev/null; ls \(dir.file("pkg/Fixtures")) >/dev/null; "
            + "test -e \(dir.file("pkg/absent")) || /bin/true; "
            // A child started with an empty environment, a relative path after cd, a tree walked.
            + "env -i /bin/sh -c 'cat \(dir.file("pkg/alone.txt"))' >/dev/null; "
            + "cd \(dir.file("pkg/Fixtures")) && cat deep/more.txt >/dev/null; ls -R \(dir.file("pkg")) >/dev/null; exit 3"
        let (command, traces) = observer.observing(Command(executable: "/bin/sh", arguments: ["-c", script]))
        let (ending, _, _) = await LocalShell("test").capture(command, timeout: 60)
        #expect(ending == .exited(3), "the exit status passes through the observer")
        let paths = try #require(observer.paths(in: traces))
        #expect(paths.contains(dir.file("pkg/Fixtures/in.txt")), "a file a child process read")
        #expect(paths.contains(dir.file("pkg/Fixtures")), "a folder a child listed")
        #expect(paths.contains(dir.file("pkg/absent")), "a path looked for and not found")
        #expect(paths.contains("/bin/true") || paths.contains("/usr/bin/true"), "a program executed")
        #expect(paths.contains(dir.file("pkg/alone.txt")), "read by a child whose environment was emptied")
        #expect(paths.contains(dir.file("pkg/Fixtures/deep/more.txt")), "a relative path, placed")
        #expect(paths.contains(dir.file("pkg/Fixtures/deep")), "a nested folder a walk listed")
        #expect(!FileManager.default.fileExists(atPath: traces), "the traces are removed once read")

        // A process killed by a signal is reported killed by it, as without the observer.
        let (killed, _) = observer.observing(Command(executable: "/bin/sh", arguments: ["-c", "kill -SEGV $$"]))
        let plain = await LocalShell("test").capture(Command(executable: "/bin/sh", arguments: ["-c", "kill -SEGV $$"]), timeout: 60)
        #expect(await LocalShell("test").capture(killed, timeout: 60).0 == plain.0)
        #expect(observer.paths(in: dir.file("traces/none")) == nil, "no trace: not observed")
    }

    /// The preloaded library sees only what runs through libc in a program that loads it: where it cannot follow,
    /// the unit is not observed (its targets fall back to the safe rule), never observed with something missing.
    @Test func whatThePreloadCannotFollowLeavesTheUnitUnobserved() async throws {
        let dir = try TempDir()
        let (found, why) = await RunTimeObserver.find(folder: dir.file("traces"), choice: .preload)
        let observer = try #require(found, "scripts/test.sh builds the library: \(why ?? "")")
        // A statically linked program (Debian's ldconfig is one): started by the test process, or as the test process.
        let ldconfig = ["/sbin/ldconfig", "/usr/sbin/ldconfig"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let staticProgram = try #require(ldconfig, "a static program to start")
        let (child, childTraces) = observer.observing(Command(executable: "/bin/sh", arguments: ["-c", "\"$0\" --version >/dev/null", staticProgram]))
        #expect(await LocalShell("test").capture(child, timeout: 60).0 == .exited(0))
        #expect(observer.paths(in: childTraces) == nil, "a static child: not observed")
        let (root, rootTraces) = observer.observing(Command(executable: staticProgram, arguments: ["--version"]))
        #expect(await LocalShell("test").capture(root, timeout: 60).0 == .exited(0))
        #expect(observer.paths(in: rootTraces) == nil, "a static test process: not observed")
        // A script whose interpreter is static.
        let script = dir.file("static-interpreter")
        try "#!\(staticProgram) --version\n".write(toFile: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
        let (interpreted, interpretedTraces) = observer.observing(Command(executable: "/bin/sh", arguments: ["-c", "\"$0\" >/dev/null 2>&1; true", script]))
        #expect(await LocalShell("test").capture(interpreted, timeout: 60).0 == .exited(0))
        #expect(observer.paths(in: interpretedTraces) == nil, "a script run by a static interpreter: not observed")
        // And the plain case still is: the same shell, no static program.
        let (plain, plainTraces) = observer.observing(Command(executable: "/bin/sh", arguments: ["-c", "true"]))
        #expect(await LocalShell("test").capture(plain, timeout: 60).0 == .exited(0))
        #expect(observer.paths(in: plainTraces) != nil)
    }

    @Test func preloadRecordsAreReadStrictly() {
        func data(_ records: [String]) -> Data { Data(records.map { $0 + "\u{0}" }.joined().utf8) }
        let read = PreloadRecords.read(data(["s/usr/bin/dash", "r/pkg/./Fixtures/../a.txt", "x/pkg/.build/debug/tool", "r/pkg/caf\u{e9}\n"]))
        #expect(read?.paths == ["/usr/bin/dash", "/pkg/a.txt", "/pkg/.build/debug/tool", "/pkg/caf\u{e9}\n"])
        #expect(read?.started == ["/usr/bin/dash"])
        #expect(PreloadRecords.read(data(["r/a", "!a statically linked program was executed"])) == nil)
        #expect(PreloadRecords.read(data(["r relative"])) == nil, "a path that is not absolute: not observed")
        #expect(PreloadRecords.read(data(["q/future-kind"])) == nil, "a record this version cannot read")
    }
}
