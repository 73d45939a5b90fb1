import FanoutAgents
import FanoutCore
import Foundation
import Testing

/// The mutation harness (`fanout-bench selective-mutations`) as a test, on the RunTime fixture: with the real Fanout
/// it finds no false green over a mutation of each file; with a stand-in "fanout" that skips every target whatever
/// changed, it finds the false greens (a harness that cannot fail proves nothing).
@Suite("Selective testing: no false green, by mutation", .serialized, .timeLimit(.minutes(10)))
struct SelectiveMutationsTests {
    struct Results: Decodable {
        struct Mutation: Decodable {
            var file: String
            var ran: [String]
            var skipped: [String]
            var caught: [String]
            var falseGreens: [String]
        }
        var mutations: [Mutation]
        var testTargets: [String]
    }

    func harness(fanout: String, dir: TempDir, mutations: Int) async throws -> (UnitEnding, Results, String) {
        let package = try fixtureCopy("RunTime", dir)
        let command = Command(executable: try siblingExecutable("fanout-bench"), arguments: [
            "selective-mutations", "--fanout", fanout, "--package", package, "--mutations", String(mutations), "--seed", "7",
            "--slots", "2", "--overhead-rounds", "0", "--dir", dir.file("bench"), "--json", dir.file("results.json"),
        ])
        let (ending, out, err) = await LocalTransport(slots: 1).capture(command, timeout: 540)
        let text = String(decoding: out + err, as: UTF8.self)
        let data = try Data(contentsOf: URL(fileURLWithPath: dir.file("results.json")))
        return (ending, try JSONDecoder().decode(Results.self, from: data), text)
    }

    @Test func theRealFanoutHasNoFalseGreenOnAnyFileOfTheFixture() async throws {
        let dir = try TempDir()
        let (ending, results, text) = try await harness(fanout: try fanoutExecutable(), dir: dir, mutations: 7)
        #expect(ending == .exited(0), "\(text)")
        #expect(results.mutations.count == 7)
        #expect(results.testTargets == ["CLITests", "GoldenTests", "WordsTests"])
        #expect(results.mutations.allSatisfy { $0.falseGreens.isEmpty }, "\(text)")
        // It saved something and still caught the mutations that broke a test.
        #expect(results.mutations.contains { !$0.skipped.isEmpty }, "\(text)")
        let greeter = results.mutations.first { $0.file == "Sources/greeter/main.swift" }
        #expect(greeter?.ran == ["CLITests"] && greeter?.caught == ["CLITests"], "\(text)")
        let golden = results.mutations.first { $0.file == "Golden/shout.txt" }
        #expect(golden?.ran == ["GoldenTests"] && golden?.caught == ["GoldenTests"], "\(text)")
    }

    @Test func aFanoutThatSkipsEverythingIsCaughtGivingFalseGreens() async throws {
        let dir = try TempDir()
        // A stand-in: writes a report in which every target passed (first run) or was skipped (every later one).
        let fake = dir.file("fake-fanout")
        let targets = ["CLITests", "GoldenTests", "WordsTests"]
        let decisions = targets.map { #"{"target":"\#($0)","module":"\#($0)","skipped":true}"# }.joined(separator: ",")
        let verdicts = targets.map { #"{"target":"\#($0)","verdict":"passed"}"# }.joined(separator: ",")
        let script = """
            #!/bin/sh
            while [ $# -gt 0 ]; do case "$1" in --report-dir) dir=$2; shift;; esac; shift; done
            mkdir -p "$dir"
            printf '%s' '{"selective":{"decisions":[\(decisions)],"verdicts":[\(verdicts)]},"results":[],"timing":{"makespan":0}}' > "$dir/report.json"

            """
        try Data(script.utf8).write(to: URL(fileURLWithPath: fake))
        chmod(fake, 0o755)
        let (ending, results, text) = try await harness(fanout: fake, dir: dir, mutations: 7)
        #expect(ending == .exited(1), "the harness fails on a false green: \(text)")
        let found = Set(results.mutations.flatMap(\.falseGreens))
        #expect(found.contains("CLITests"), "greeter's mutation breaks CLITests, which was skipped: \(text)")
        #expect(found.contains("GoldenTests"), "the golden file's breaks GoldenTests: \(text)")
        #expect(!found.contains("WordsTests") || results.mutations.contains { $0.file.hasPrefix("Sources/Words/") || $0.file.hasPrefix("Tests/WordsTests/") })
    }
}
