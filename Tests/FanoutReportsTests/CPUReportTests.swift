import FanoutCore
import FanoutTestSupport
import Foundation
import Testing
@testable import FanoutReports

/// The CPU fields of a report as every writer shows them, and as merged shards combine them.
@Suite(.timeLimit(.minutes(1))) struct CPUReportTests {
    static let hostile = #"<mac&"1">"#

    /// A CPU-bound run: 170.4 s of CPU on one 2-core machine, makespan 88.6 s, bound 85.2 s by the cores.
    static func cpuBound() -> RunReport {
        var b = ReportBuilder()
        b.unit(1, agent: "local", suites: ["M.C"], duration: 88.6)
        b.passed("M.C/testA", duration: 40)
        var r = b.build()
        r.units[0].cpuSeconds = 170.4
        r.units[0].peakMemoryBytes = 300 * 1024 * 1024
        r.units[0].cpuWaitSeconds = 12
        r.agents[0].cores = 2
        r.agents[0].machine = "m-1"
        r.agents[0].cpuSeconds = 50.4
        r.agents[0].cpuBusy = 50.4 / (2 * 88.6)
        r.agents[1].name = hostile
        r.agents[1].cores = 2
        r.agents[1].machine = "m<1>"
        r.agents[1].cpuSeconds = 120
        r.agents[1].cpuBusy = 120 / (2 * 88.6)
        r.timing = Timing(wall: 95, preparation: 2, makespan: 88.6, lowerBound: 85.2)
        r.timing.cpuSeconds = 170.4
        r.timing.cores = 2
        r.timing.cpuLowerBound = 85.2
        r.timing.boundBy = "cpu"
        return r
    }

    @Test func theConsoleLineNamesTheCoresWhenTheyBind() {
        let text = ConsoleSummary(color: false).render(Self.cpuBound())
        #expect(text.contains("\n  lower bound  85.2 s (CPU-bound: 170.4 s of CPU on 2 cores, busy 96 % of the run) · 1.04 × LB\n"),
                "one line: \(text)")
        #expect(!text.contains("\n  cpu   "), "no second CPU line when the CPU binds")
        // Larger figures on a narrow terminal: said shorter rather than wrapped.
        var big = Self.cpuBound()
        big.timing.cores = 16
        big.timing.cpuSeconds = 1_363.2
        let narrow = ConsoleSummary(color: false, width: 96).render(big)
        #expect(narrow.contains("\n  lower bound  85.2 s (CPU-bound: 22 m 43 s of CPU on 16 cores, busy 96 %) · 1.04 × LB\n"),
                "\(narrow)")
    }

    /// When the slots bind the line reads as it always has; measured CPU gets a line of its own.
    @Test func theConsoleLineIsUnchangedWhenSlotsBind() {
        var r = Self.cpuBound()
        r.timing = Timing(wall: 95, preparation: 2, makespan: 88.6, lowerBound: 85.2)
        r.timing.boundBy = "slots"
        r.timing.cpuSeconds = 20
        r.timing.cores = 2
        r.timing.cpuLowerBound = 10
        let text = ConsoleSummary(color: false).render(r)
        #expect(text.contains("\n  lower bound  85.2 s (LB, from this run's per-test durations) · makespan 1.04 × LB\n"))
        #expect(text.contains("\n  cpu          20.0 s of CPU on 2 cores, busy 11 % of the run (CPU / cores: 10.0 s)\n"))
        r.timing.boundBy = "longest test"
        #expect(ConsoleSummary(color: false).render(r).contains("lower bound  85.2 s (the longest test) · 1.04 × LB\n"))
        r.timing.boundBy = "destination \u{1B}[31mred"
        let destination = ConsoleSummary(color: false).render(r)
        #expect(destination.contains("(destination red: its test time / the slots serving it)")
                && !destination.contains("\u{1B}"), "terminal-safe")
    }

    @Test func htmlShowsEachAgentsCoresCPUAndBusyEscaped() throws {
        let html = HTMLWriter().render(Self.cpuBound())
        #expect(html.contains("lower bound 85.2 s (CPU-bound: 170.4 s of CPU on 2 cores, busy 96 % of the run) · 1.04 × LB"))
        #expect(html.contains("<th>cores</th><th>CPU</th><th>busy</th>"))
        #expect(html.contains("<tr><td>&lt;mac&amp;&quot;1&quot;&gt;</td><td>ssh</td><td>2</td><td>127.0.1.2</td>"
            + "<td title=\"machine m&lt;1&gt;\">2</td><td>120.0 s</td><td><span class=\"busy\"><span style=\"width: 41px\"></span></span> 68 %</td>"),
                "\(html)")
        #expect(!html.contains(Self.hostile))
        // Per unit: in its timeline tooltip and the table under the timeline.
        #expect(html.contains("· CPU 170.4 s · peak memory 300 MiB · waited 12.0 s for a core"))
        #expect(html.contains("<th>cores used</th><th>waited for a core</th><th>peak memory</th>"))
        #expect(html.contains("<td>1</td><td>local #0</td><td>linux</td><td>88.6 s</td><td>170.4 s</td><td>1.92</td><td>12.0 s</td><td>300 MiB</td>"))
    }

    /// An older report (nothing measured) shows no CPU column, no unit table, and the timing line as before.
    @Test func htmlOfAnUnmeasuredReportIsAsBefore() {
        var b = ReportBuilder()
        b.passed("M.C/testA")
        let html = HTMLWriter().render(b.build())
        #expect(!html.contains("<th>cores</th>") && !html.contains("table class=\"units\""))
        #expect(html.contains("Wall 75.5 s · makespan 13.5 s · lower bound 11.0 s · 1.23 × LB · 2 agents, 4 slots"))
    }

    @Test func markdownNamesTheBindingTermAndEachAgentsCPU() {
        let text = MarkdownWriter().render(Self.cpuBound())
        #expect(text.contains("Wall 95.0 s · makespan 88.6 s · lower bound 85.2 s (CPU-bound: 170.4 s of CPU on 2 cores, "
            + "busy 96 % of the run) · 1.04 × LB · 2 agents, 4 slots\n"), "\(text)")
        #expect(text.contains("CPU per agent: &lt;mac&amp;&quot;1&quot;&gt; 120.0 s of CPU on 2 cores, busy 68 % · "
            + "local 50.4 s of CPU on 2 cores, busy 28 %\n"), "\(text)")
        var r = Self.cpuBound()
        r.timing.boundBy = "destination a|b"
        #expect(MarkdownWriter().render(r).contains("(destination a\\|b: its test time / the slots serving it)"))
    }

    /// report.json carries every CPU field as the schema names it, and reads back equal.
    @Test func jsonCarriesTheCPUFields() throws {
        let report = Self.cpuBound()
        let data = try JSONReportWriter().encode(report)
        let text = String(decoding: data, as: UTF8.self)
        for key in [#""boundBy" : "cpu""#, #""cpuLowerBound" : 85.2"#, #""cores" : 2"#, #""cpuSeconds" : 170.4"#,
                    #""peakMemoryBytes" : 314572800"#, #""machine" : "m-1""#] {
            #expect(text.contains(key), "\(key)")
        }
        #expect(try JSONReportReader().decode(data) == report)
    }

    // MARK: - Merging shards

    func shard(_ i: Int, machine: String, cores: Int, cpu: Double, makespan: Double, bound: Double, by: String) -> RunReport {
        var b = ReportBuilder()
        b.passed("M.S\(i)/test")
        var r = b.build()
        r.shard = Shard(index: i, count: 2)
        r.agents = [AgentInfo(name: "local", transport: "local", slots: 2)]
        r.agents[0].cores = cores
        r.agents[0].machine = machine
        r.agents[0].cpuSeconds = cpu
        r.timing = Timing(wall: makespan + 5, preparation: 1, makespan: makespan, lowerBound: bound)
        r.timing.cpuSeconds = cpu
        r.timing.cores = cores
        r.timing.cpuLowerBound = cpu / Double(cores)
        r.timing.boundBy = by
        return r
    }

    /// Shards run at once on separate jobs: the merged bound is the slowest shard's (its CPU term included), CPU is
    /// summed, cores counted over distinct machines; the CPU term is never all CPU / all cores.
    @Test func mergedShardsKeepTheSlowestShardsBoundAndSumTheCPU() {
        let merged = ReportMerger.merge([shard(1, machine: "A", cores: 2, cpu: 100, makespan: 55, bound: 50, by: "cpu"),
                                         shard(2, machine: "B", cores: 4, cpu: 40, makespan: 14, bound: 12, by: "slots")])
        let t = merged.report.timing
        #expect(merged.problems.isEmpty)
        #expect(t.makespan == 55 && t.lowerBound == 50 && t.boundBy == "cpu" && t.efficiency == 1.1)
        #expect(t.cpuSeconds == 140 && t.cores == 6 && t.cpuLowerBound == 50, "not 140 / 6")
        #expect(merged.report.agents.map(\.cpuSeconds) == [100, 40])

        // Two shards on one machine count its cores once.
        let same = ReportMerger.merge([shard(1, machine: "A", cores: 2, cpu: 10, makespan: 9, bound: 8, by: "slots"),
                                       shard(2, machine: "A", cores: 2, cpu: 10, makespan: 9, bound: 8, by: "slots")])
        #expect(same.report.timing.cores == 2 && same.report.timing.boundBy == "slots")

        // Reports without CPU merge without it.
        var old = shard(1, machine: "A", cores: 2, cpu: 1, makespan: 9, bound: 8, by: "slots")
        old.timing = Timing(wall: 10, preparation: 1, makespan: 9, lowerBound: 8)
        old.agents = [AgentInfo(name: "local", transport: "local", slots: 2)]
        let plain = ReportMerger.merge([old]).report.timing
        #expect(plain.cpuSeconds == nil && plain.cores == nil && plain.cpuLowerBound == nil && plain.boundBy == nil)
        #expect(plain.lowerBound == 8)
    }
}
