import FanoutCore
import Testing

/// The run's phases, one after another: they add up to the time from the start to the last mark.
@Suite struct PhaseTimelineTests {
    @Test func eachPhaseBeginsWhereThePreviousOneEnded() {
        var timeline = PhaseTimeline()
        timeline.end("checks", at: 0.25)
        timeline.end("build", at: 1.5)
        timeline.end("tests", at: 4)
        #expect(timeline.phases == [PhaseTime("checks", seconds: 0.25), PhaseTime("build", seconds: 1.25),
                                    PhaseTime("tests", seconds: 2.5)])
        #expect(timeline.total == 4)
        #expect(timeline.mark == 4)
    }

    @Test func aMarkBeforeThePreviousOneCountsNothingAndLosesNothing() {
        var timeline = PhaseTimeline(start: 1)
        timeline.end("plan", at: 3)
        timeline.end("agents", at: 2.5) // ended "before" the plan (another clock's rounding): 0 s, not negative
        timeline.end("tests", at: 5)
        #expect(timeline.phases.map(\.seconds) == [2, 0, 2])
        #expect(timeline.total == 4, "still the time from the start to the last mark")
    }
}
