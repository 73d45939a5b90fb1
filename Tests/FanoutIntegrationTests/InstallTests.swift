import FanoutAgents
@testable import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// What scripts/install.sh installed. scripts/test.sh runs `scripts/install.sh --debug PREFIX` before the tests (swift
/// test holds the build folder's lock, so the script cannot build from inside a test) and names PREFIX in
/// FANOUT_INSTALL_PREFIX.
@Suite(.timeLimit(.minutes(2)),
       .enabled(if: ProcessInfo.processInfo.environment["FANOUT_INSTALL_PREFIX"] != nil,
                "scripts/test.sh installs into a scratch prefix first"))
struct InstallTests {
    let prefix = ProcessInfo.processInfo.environment["FANOUT_INSTALL_PREFIX"] ?? ""

    func shell(_ script: String) async -> (Int32, String) {
        let (ending, out, err) = await LocalTransport(slots: 1).capture(
            Command(executable: "/bin/bash", arguments: ["--noprofile", "--norc", "-c", script]), timeout: 60)
        let code: Int32 = if case .exited(let c) = ending { c } else { -1 }
        return (code, String(decoding: out + err, as: UTF8.self))
    }

    @Test func theInstalledCommandSaysItsVersion() async throws {
        let (code, out) = await shell(ShellQuote.quote(prefix + "/bin/fanout") + " --version")
        #expect(code == 0)
        #expect(out.trimmingCharacters(in: .whitespacesAndNewlines) == Coordinator.version)
    }

    @Test func theManPageRendersEveryCommand() async throws {
        let page = prefix + "/share/man/man1/fanout.1"
        let (code, out) = await shell("groff -mdoc -Tutf8 -P-cbou " + ShellQuote.quote(page) + " 2>&1")
        #expect(code == 0, "\(out)")
        for word in ["run", "plan", "init", "history", "report", "merge", "--shard", "Exit codes"] {
            #expect(out.contains(word), "the man page mentions \(word)")
        }
        #expect(!out.contains("warning"), "groff read the page without complaint: \(out.prefix(2000))")
    }

    @Test func bashCompletesSubcommandsAndFlags() async throws {
        let completion = ShellQuote.quote(prefix + "/share/bash-completion/completions/fanout")
        func complete(_ words: [String]) async -> [String] {
            let array = words.map(ShellQuote.quote).joined(separator: " ")
            let line = words.joined(separator: " ")
            let script = """
            source \(completion)
            COMP_WORDS=(\(array)); COMP_CWORD=\(words.count - 1); COMP_LINE=\(ShellQuote.quote(line)); COMP_POINT=\(line.utf8.count)
            _fanout fanout \(ShellQuote.quote(words.last ?? "")) \(ShellQuote.quote(words[words.count - 2]))
            printf '%s\\n' "${COMPREPLY[@]}"
            """
            let (code, out) = await shell(script)
            #expect(code == 0, "\(out)")
            return out.split(separator: "\n").map(String.init)
        }
        #expect(await complete(["fanout", "in"]) == ["init"])
        #expect(await complete(["fanout", "run", "--sha"]) == ["--shard"])
        #expect(await complete(["fanout", "report", "me"]) == ["merge"])
    }

    @Test func zshAndFishCompletionsAreInstalled() throws {
        let zsh = try String(contentsOfFile: prefix + "/share/zsh/site-functions/_fanout", encoding: .utf8)
        #expect(zsh.hasPrefix("#compdef fanout"))
        let fish = try String(contentsOfFile: prefix + "/share/fish/vendor_completions.d/fanout.fish", encoding: .utf8)
        #expect(fish.contains("complete -c 'fanout'"))
    }

    /// The installed fanout finds the observer it preloads (`../lib/fanout/` from its own folder), and that library
    /// observes: it was built without the Swift runtime (whose crash handlers would enter every test process).
    @Test func theObserverIsInstalledWhereFanoutLooksAndObserves() async throws {
        let installed = prefix + "/lib/fanout/libFanoutObserve.so"
        #expect(FileManager.default.fileExists(atPath: installed))
        let candidates = RunTimeObserver.libraryCandidates(executable: prefix + "/bin/fanout", environment: [:])
        #expect(candidates.contains(installed), "\(candidates)")
        #expect(RunTimeObserver.libraryCandidates(executable: prefix + "/bin/fanout",
                                                  environment: ["FANOUT_OBSERVE_LIBRARY": "/x/lib.so"]) == ["/x/lib.so"])
        let (ldd, out) = await shell("ldd " + ShellQuote.quote(installed))
        #expect(ldd == 0 && !out.contains("swift"), "links libc alone: \(out)")
        let dir = try TempDir()
        let observer = RunTimeObserver(preload: installed, folder: dir.path)
        let (command, traces) = observer.observing(Command(executable: "/bin/sh", arguments: ["-c", "test -e \"$0\"", dir.file("x")]))
        #expect(await LocalTransport(slots: 1).capture(command, timeout: 60).0 == .exited(1))
        #expect(observer.paths(in: traces)?.contains(dir.file("x")) == true)
    }
}
