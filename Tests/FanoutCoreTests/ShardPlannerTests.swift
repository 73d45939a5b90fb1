import Foundation
import Testing
@testable import FanoutCore

@Suite(.timeLimit(.minutes(1))) struct ShardPlannerTests {
    @Test func shardsParseAsIOverN() {
        #expect(Shard(parsing: "2/4") == Shard(index: 2, count: 4))
        #expect(Shard(parsing: " 1 / 1 ") == Shard(index: 1, count: 1))
        for bad in ["0/4", "5/4", "4", "a/b", "1/0", "-1/3", "1/2/3", ""] { #expect(Shard(parsing: bad) == nil, "\(bad)") }
    }

    @Test func everyItemIsInExactlyOneShardWhateverTheOrderItArrivesIn() {
        var rng = SeededRandom(3)
        let items = (0..<300).map { item("M", "C\($0)", Double.random(in: 0.01...5, using: &rng)) }
        let shards = ShardPlanner.shards(items, count: 7)
        #expect(shards.count == 7)
        #expect(shards.flatMap { $0 }.count == 300)
        #expect(Set(shards.flatMap { $0 }.map(\.suite)).count == 300)
        // Another job sees the same items in another order: it must compute the very same split.
        let again = ShardPlanner.shards(items.shuffled(using: &rng), count: 7)
        #expect(again.map { Set($0.map(\.suite)) } == shards.map { Set($0.map(\.suite)) })
    }

    @Test func fourShardsOfALognormalSuiteAreEvenWithinTenPercent() {
        var rng = SeededRandom(11)
        let items = (0..<200).map { i -> WorkItem in
            let u = Double.random(in: 0.0001...1, using: &rng), v = Double.random(in: 0.0001...1, using: &rng)
            let normal = (-2 * log(u)).squareRoot() * cos(2 * Double.pi * v) // Box-Muller
            return item("M", "C\(i)", exp(normal))
        }
        let loads = ShardPlanner.loads(ShardPlanner.shards(items, count: 4))
        let even = items.reduce(0) { $0 + $1.estimate } / 4
        #expect(loads.count == 4)
        #expect((loads.max() ?? 0) <= 1.10 * even, "\(loads) against \(even)")
    }

    @Test func aClassNeverTimedWeighsTheMedianTimedRatePerTest() {
        var known = (0..<4).map { item("M", "K\($0)", [1.0, 2, 3, 100][$0], tests: 10) } // rates 0.1, 0.2, 0.3, 10
        var guess = item("M", "New", 0.001, tests: 10)
        guess.source = .testCount(secondsPerTest: 0.0001)
        known.append(guess)
        let weighed = ShardPlanner.balancedEstimates(known)
        #expect(abs((weighed.first { $0.suite.name == "New" }?.estimate ?? 0) - 2.5) < 1e-9, "the median rate 0.25 s × 10 tests")
        #expect(weighed.filter { $0.suite.name != "New" }.map(\.estimate) == [1, 2, 3, 100], "timed items keep theirs")
    }
}
