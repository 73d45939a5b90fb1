import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// README's first screen as a newcomer runs it: a user without root, on a machine where Debian's three development
/// packages Fanout builds against are not installed, in a fresh copy of HEAD. The README's lines run as written, with
/// one liberty: `scripts/install.sh` gets `--debug` (its comment offers it; a release build takes far longer here).
/// Then the installed `fanout --version`, `fanout init` in a package (a copy of the demo suite) and `fanout plan &&
/// fanout run`, which builds that package as the user.
///
/// The packages are made absent for the user alone: in a mount namespace of its own, their headers and pkg-config
/// files are covered by empty files (`/dev/null`) and empty folders, so a build that used the system's copies
/// instead of those install.sh fetched would fail to compile. Needs root to make that namespace and to become
/// another user (`nobody`); CI runs as root. This machine serves github.com from a local mirror that root owns, so
/// the user's git is told to trust it (`safe.directory` in its ~/.gitconfig), as git asks of any repository another user owns; a user's
/// own machine fetches from GitHub and needs nothing of the kind.
@Suite(.serialized, .timeLimit(.minutes(45)))
struct InstallAsUserTests {
    static let user = (uid: 65534, gid: 65534)

    @Test(.enabled(if: getuid() == 0, "needs root: a mount namespace that hides the -dev packages, and setpriv to a user"))
    func readmesFirstScreenRunsAsAUserWithoutRootOrTheDevelopmentPackages() async throws {
        let lines = try ReadmeCommandLinesTests.lines(of: ReadmeCommandLinesTests.install)
        guard lines.count == 4, lines[0].text.hasPrefix("scripts/install.sh "), lines[1].text == "fanout --version",
              let packagePath = lines[2].commands.first(where: { $0.hasPrefix("cd ") }).map({ String($0.dropFirst(3)) }),
              lines[2].commands.last == "fanout init", lines[3].text == "fanout plan && fanout run" else {
            Issue.record("README's first screen changed; this test runs its lines: \(lines.map(\.text))")
            return
        }
        let dir = try TempDir()
        let home = dir.file("home")
        let clone = home + "/fanout"
        let package = home + "/" + packagePath
        let root = ShellQuote.quote(repositoryRoot.path)
        let (copied, copyOut, copyErr) = await sh("""
            mkdir -p \(ShellQuote.quote(clone)) \(ShellQuote.quote(package)) \
            && git -C \(root) archive --format=tar HEAD | tar -xf - -C \(ShellQuote.quote(clone)) \
            && git -C \(root) archive --format=tar HEAD Tests/Fixtures/DemoSuite | tar -xf - -C \(ShellQuote.quote(package)) --strip-components=3 \
            && printf '[safe]\\n\\tdirectory = *\\n' > \(ShellQuote.quote(home))/.gitconfig \
            && chmod 0755 \(ShellQuote.quote(dir.path)) && chown -R \(Self.user.uid):\(Self.user.gid) \(ShellQuote.quote(home))
            """)
        try #require(copied == 0, "a fresh copy of HEAD for the user: \(copyOut)\(copyErr)")
        // The user's shell: README's lines in order, each where the one before left it, and the demo's slow classes
        // left out (the liberty every README test takes: fanout.yml, as a user would edit it).
        let install = lines[0].text + " --debug"
        let script = """
            set -e
            cd "$HOME/fanout"
            \(install)
            export PATH="$HOME/.local/bin:$PATH"
            echo "version: $(\(lines[1].text))"
            cd "$HOME"
            \(lines[2].text)
            printf '%s\\n' "skip: ['Performance|SessionTimeout|Straggler|Flaky']" 'destination:' '  name: local' \
              '  environment: { DEMO_LATENCY_SCALE: "0.05" }' >> fanout.yml
            \(lines[3].text)
            """
        let pc = "/usr/lib/$(gcc -dumpmachine)/pkgconfig"
        let hide = """
            set -e
            for f in /usr/include/libssh2.h /usr/include/libssh2_sftp.h /usr/include/libssh2_publickey.h \
                     /usr/include/sqlite3.h /usr/include/sqlite3ext.h \
                     \(pc)/libssh2.pc \(pc)/sqlite3.pc \(pc)/openssl.pc \(pc)/libssl.pc \(pc)/libcrypto.pc; do
              if [ -e "$f" ]; then mount --bind /dev/null "$f"; fi
            done
            for d in /usr/include/openssl "/usr/include/$(gcc -dumpmachine)/openssl"; do
              if [ -d "$d" ]; then mount -t tmpfs -o ro tmpfs "$d"; fi
            done
            if [ -s /usr/include/libssh2.h ] || pkg-config --exists libssh2; then echo 'libssh2 is still visible' >&2; exit 99; fi
            exec setpriv --reuid=\(Self.user.uid) --regid=\(Self.user.gid) --clear-groups \
              env -i HOME=\(ShellQuote.quote(home)) PATH=/opt/swift/usr/bin:/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
              bash -c \(ShellQuote.quote(script))
            """
        let (code, stdout, stderr) = await sh("unshare --mount --propagation private sh -c \(ShellQuote.quote(hide))", timeout: 40 * 60)
        let out = stdout + stderr
        #expect(code == 0, "README's first screen as a user without root: exit \(code)\n\(out.suffix(4000))")
        #expect(out.contains("fetching libssh2-1-dev libsqlite3-dev libssl-dev (Debian packages, no root needed)"),
                "install.sh fetched the three packages itself: \(out.suffix(3000))")
        #expect(out.contains("version: \(Coordinator.version)"), "the installed fanout answers --version: \(out.suffix(2000))")
        #expect(FileManager.default.fileExists(atPath: home + "/.local/share/man/man1/fanout.1"), "the man page")
        #expect(FileManager.default.fileExists(atPath: package + "/fanout.yml"), "fanout init wrote fanout.yml")
        #expect(out.contains("predicted (s)"), "fanout plan showed its split: \(out.suffix(2000))")
        #expect(out.contains("PASSED"), "fanout run built the package and ran it: \(out.suffix(2000))")
        // Everything the user made is the user's: nothing was written as root.
        let (owned, owners, _) = await sh("find \(ShellQuote.quote(home)) ! -uid \(Self.user.uid) | head -5")
        #expect(owned == 0 && owners.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "files not the user's: \(owners)")
    }
}
