import Testing
@testable import FanoutCore

/// The report's lower bound comes from the tests alone, never from how Fanout grouped them.
@Suite(.timeLimit(.minutes(2))) struct MeasuredLowerBoundTests {
    func work(_ seconds: [Double], on destination: String = "local") -> [MeasuredLowerBound.Work] {
        seconds.map { .init(destination: destination, seconds: $0) }
    }

    /// The case from the field: one 26-test class of 21.9 s among small ones, on 8 slots. Its tests alone bound the
    /// run far below the class's 21.9 s.
    @Test func aLongClassOfShortTestsDoesNotBoundTheRun() {
        let longClass = Array(repeating: 21.9 / 26, count: 26)
        let small = Array(repeating: 0.5, count: 110)
        let bound = MeasuredLowerBound.perTest(work(longClass + small), slots: 8)
        #expect(abs(bound - (21.9 + 55) / 8) < 1e-9)
        #expect(bound < 21.9 / 2)
    }

    @Test func theLongestSingleTestBoundsWhenItIsLongerThanTheShare() {
        #expect(MeasuredLowerBound.perTest(work([9, 1, 1, 1]), slots: 4) == 9)
        #expect(MeasuredLowerBound.perTest(work([2, 2, 2, 2]), slots: 4) == 2)
        #expect(MeasuredLowerBound.perTest([], slots: 4) == 0)
    }

    /// Retries are work the run had to do; nonsense durations are no work.
    @Test func everyAttemptCountsAndNonsenseDoesNot() {
        #expect(MeasuredLowerBound.perTest(work([1, 1, 1, 1, .nan, .infinity, -3]), slots: 2) == 2)
    }

    /// Agents that serve destinations separately: each destination's tests can use only its own slots.
    @Test func aDestinationServedByFewSlotsBoundsOnItsOwn() {
        let debug = work(Array(repeating: 1, count: 12), on: "debug")
        let release = work(Array(repeating: 1, count: 4), on: "release")
        // 16 s over 8 slots is 2 s, but debug's 12 s can only use its 4 slots: 3 s.
        #expect(MeasuredLowerBound.perTest(debug + release, slots: 8, slotsServing: ["debug": 4, "release": 4]) == 3)
        // Served by every slot (one pool), the pooled bound holds.
        #expect(MeasuredLowerBound.perTest(debug + release, slots: 8) == 2)
        // A destination no usable slot serves adds no bound of its own (its tests did not run).
        #expect(MeasuredLowerBound.perTest(debug + release, slots: 8, slotsServing: ["debug": 8, "release": 0]) == 2)
    }

    // MARK: - The CPU term

    func agent(_ name: String, cores: Int?, machine: String?) -> AgentInfo {
        var a = AgentInfo(name: name, transport: "ssh", slots: 2)
        a.cores = cores
        a.machine = machine
        return a
    }

    /// The case from the field: 4 units of 40 s of CPU each on 8 slots of one 2-core machine. Test time / slots says
    /// 40 s; the cores say no schedule ends before 160 s / 2 = 80 s.
    @Test func cpuTimeOverCoresBindsACPUBoundRun() {
        let tests = work(Array(repeating: 20, count: 16)) // 4 tests of 20 s per unit
        let cpu = MeasuredLowerBound.CPU(seconds: 160, cores: 2)
        let bound = MeasuredLowerBound.bound(tests, slots: 8, cpu: cpu)
        #expect(bound.seconds == 80 && bound.boundBy == "cpu" && bound.cpu == 80)
        // The old call site keeps its meaning: no CPU, no CPU term.
        #expect(MeasuredLowerBound.perTest(tests, slots: 8) == 40)
    }

    /// Without CPU measured there is no CPU term (never 0 pretending to be a bound), and the binding term is named
    /// from the others: the slots first on a tie, then the longest test, then a destination.
    @Test func withoutCPUTheOtherTermsBindAndAreNamed() {
        let none = MeasuredLowerBound.bound(work([2, 2, 2, 2]), slots: 4)
        #expect(none.seconds == 2 && none.boundBy == "slots" && none.cpu == nil)
        #expect(MeasuredLowerBound.bound(work([9, 1, 1, 1]), slots: 4).boundBy == "longest test")
        let debug = work(Array(repeating: 1, count: 12), on: "debug")
        let release = work(Array(repeating: 1, count: 4), on: "release")
        let byDestination = MeasuredLowerBound.bound(debug + release, slots: 8, slotsServing: ["debug": 4, "release": 4])
        #expect(byDestination.seconds == 3 && byDestination.boundBy == "destination debug")
        #expect(MeasuredLowerBound.bound([], slots: 4) == .init(seconds: 0, boundBy: "slots", cpu: nil))
        // Measured CPU that does not bind is still reported as the CPU term.
        let light = MeasuredLowerBound.bound(work([2, 2, 2, 2]), slots: 4, cpu: .init(seconds: 1, cores: 2))
        #expect(light.boundBy == "slots" && light.cpu == 0.5)
    }

    /// A computing test counts its time with a core to itself: 8 slots sharing 2 cores (4 per core), a test of 10 s of
    /// CPU that ran 40 s crowded counts 10 s; a waiting test (no CPU) counts what it ran; a test that computed half
    /// of 12 s counts what it would have taken alone at worst; nothing ever counts more than it ran.
    @Test func aCrowdedComputingTestCountsItsTimeAlone() {
        #expect(MeasuredLowerBound.uncontended(duration: 40, cpu: 10, sharing: 4) == 10)
        #expect(MeasuredLowerBound.uncontended(duration: 5, cpu: 0, sharing: 4) == 5)
        #expect(MeasuredLowerBound.uncontended(duration: 5, cpu: nil, sharing: 4) == 5)
        #expect(MeasuredLowerBound.uncontended(duration: 12, cpu: 3, sharing: 4) == 3, "12 − 3 × 3 = 3, never below its CPU")
        #expect(MeasuredLowerBound.uncontended(duration: 12, cpu: 2, sharing: 4) == 6)
        #expect(MeasuredLowerBound.uncontended(duration: 10, cpu: 10, sharing: 1) == 10, "a core per slot: as measured")
        #expect(MeasuredLowerBound.uncontended(duration: 2, cpu: 7, sharing: 4) == 2, "multi-threaded: never above its duration")
        // Sharing: all slots of a machine's agents over its cores; unknown cores share nothing.
        let fleet = [agent("a", cores: 2, machine: "m"), agent("b", cores: 2, machine: "m"), agent("c", cores: nil, machine: nil)]
        #expect(MeasuredLowerBound.sharing(of: fleet) == ["a": 2, "b": 2, "c": 1])
        var wide = agent("w", cores: 8, machine: "big")
        wide.slots = 4
        #expect(MeasuredLowerBound.sharing(of: [wide]) == ["w": 1], "more cores than slots: no sharing")
    }

    /// Four sshd agents on loopback share one 2-core machine: 2 cores, not 8.
    @Test func agentsOnOneMachineCountItsCoresOnce() throws {
        let fleet = (1...4).map { agent("a\($0)", cores: 2, machine: "m-1") }
        let spent = Dictionary(uniqueKeysWithValues: fleet.map { ($0.name, 40.0) })
        let cpu = try #require(MeasuredLowerBound.cpu(spent: spent, agents: fleet))
        #expect(cpu == .init(seconds: 160, cores: 2))
        #expect(cpu.bound == 80)
        #expect(MeasuredLowerBound.cores(of: fleet) == 2)
    }

    /// An agent that cannot name its machine counts on its own; distinct machines add up.
    @Test func agentsWithoutAMachineEachCount() throws {
        let fleet = [agent("a", cores: 2, machine: nil), agent("b", cores: 2, machine: nil),
                     agent("c", cores: 4, machine: "m-2"), agent("d", cores: 4, machine: "m-2")]
        let spent = ["a": 10.0, "b": 10, "c": 10, "d": 10]
        #expect(MeasuredLowerBound.cpu(spent: spent, agents: fleet) == .init(seconds: 40, cores: 8))
        #expect(MeasuredLowerBound.cores(of: fleet) == 8)
    }

    /// Only machines whose units' CPU was measured count (an idle or unmeasured machine adds no CPU, so its cores
    /// would only weaken the bound); CPU on an agent of unknown cores cannot be set against any cores.
    @Test func onlyMeasuredMachinesOfKnownCoresCount() {
        let fleet = [agent("a", cores: 2, machine: "m-1"), agent("idle", cores: 16, machine: "m-9"),
                     agent("mystery", cores: nil, machine: nil)]
        #expect(MeasuredLowerBound.cpu(spent: ["a": 30, "mystery": 100], agents: fleet) == .init(seconds: 30, cores: 2))
        #expect(MeasuredLowerBound.cpu(spent: ["mystery": 100], agents: fleet) == nil)
        #expect(MeasuredLowerBound.cpu(spent: [:], agents: fleet) == nil)
        #expect(MeasuredLowerBound.cpu(spent: ["a": .nan], agents: fleet) == nil)
    }
}
