import FanoutAgents
import FanoutCore
import Foundation
import Testing

/// README's and BENCHMARKS.md's figures are generated from the committed data of the last benchmark run
/// (docs/bench-results.json), never typed: regenerating them from it gives exactly the committed files.
@Suite(.serialized, .timeLimit(.minutes(2))) struct BenchFiguresTests {
    func report(_ extra: [String], readme: String = "README.md") async throws -> (UnitEnding, String) {
        let bench = try siblingExecutable("fanout-bench")
        let root = repositoryRoot.path
        let args = ["report", "--from", root + "/docs/bench-results.json", "--markdown", root + "/BENCHMARKS.md",
                    "--svg", root + "/docs/bench-ratios.svg", "--readme", readme.hasPrefix("/") ? readme : root + "/" + readme] + extra
        let (ending, out, err) = await LocalTransport(slots: 1).capture(Command(executable: bench, arguments: args), timeout: 60)
        return (ending, String(decoding: out + err, as: UTF8.self))
    }

    @Test func committedFiguresAreWhatTheDataGives() async throws {
        let (ending, output) = try await report(["--check"])
        #expect(ending == .exited(0), "\(output)")
    }

    /// A figure edited by hand in README is caught.
    @Test func aFigureTypedByHandIsCaught() async throws {
        let dir = try TempDir()
        let readme = try String(contentsOfFile: repositoryRoot.path + "/README.md", encoding: .utf8)
        let begin = try #require(readme.range(of: "<!-- bench:begin"))
        let end = try #require(readme.range(of: "<!-- bench:end -->"))
        var region = String(readme[begin.upperBound..<end.lowerBound])
        let digit = try #require(region.firstIndex { $0.isNumber && $0 != "9" })
        region.replaceSubrange(digit...digit, with: "9")
        let edited = String(readme[..<begin.upperBound]) + region + String(readme[end.lowerBound...])
        try edited.write(toFile: dir.file("README.md"), atomically: true, encoding: .utf8)
        let (ending, output) = try await report(["--check"], readme: dir.file("README.md"))
        #expect(ending == .exited(1), "\(output)")
        #expect(output.contains("README.md (between the bench markers)"))
    }
}
