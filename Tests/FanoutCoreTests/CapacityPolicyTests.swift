import Testing
@testable import FanoutCore

@Suite(.timeLimit(.minutes(1))) struct CapacityPolicyTests {
    let policy = CapacityPolicy()

    func machine(cores: Int = 2, memory: Int64? = 24 << 30, load: Double, inUse: Int64 = 0, running: Int) -> CapacityPolicy.Machine {
        CapacityPolicy.Machine(cores: cores, memoryBytes: memory, load: load, memoryInUse: inUse, runningUnits: running)
    }

    @Test func computingWorkWaitsForACoreWhileWaitingWorkStarts() {
        let busy = machine(load: 1.9, running: 5)
        #expect(!policy.admits(share: 1.0, memory: nil, on: busy), "both cores compute: a third computing class would slow all three")
        #expect(policy.admits(share: 0.02, memory: nil, on: busy), "a class that sleeps needs no core")
        #expect(policy.admits(share: nil, memory: nil, on: busy), "never measured: taken for waiting work")
        #expect(busy.isSaturated)
        let oneFree = machine(load: 0.95, running: 3)
        #expect(policy.admits(share: 1.0, memory: nil, on: oneFree))
        #expect(!oneFree.isSaturated)
    }

    @Test func anIdleMachineTakesAnythingEvenWorkBiggerThanIt() {
        #expect(policy.admits(share: 4.0, memory: 40 << 30, on: machine(load: 0, running: 0)))
    }

    @Test func memoryIsACapacityToo() {
        // Three units already hold 18 GiB of a 24 GiB machine: one more of 3 GiB would pass 80 %.
        let full = machine(load: 0.1, inUse: 18 << 30, running: 3)
        #expect(!policy.admits(share: 0.0, memory: 3 << 30, on: full))
        #expect(policy.admits(share: 0.0, memory: 512 << 20, on: full))
        #expect(policy.admits(share: 0.0, memory: 3 << 30, on: machine(memory: nil, load: 0.1, inUse: 18 << 30, running: 3)),
                "a machine that did not report its memory holds nothing back")
    }
}
