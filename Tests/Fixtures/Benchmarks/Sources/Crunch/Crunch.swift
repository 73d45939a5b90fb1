/// CPU work of a size: `rounds` steps of a linear congruential generator (nothing to optimize away).
public func crunch(_ rounds: Int) -> UInt64 {
    var x: UInt64 = 0x9E37_79B9_7F4A_7C15
    for _ in 0..<rounds { x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407 }
    return x
}

/// Burns CPU for `seconds`, in bursts of `burst` seconds with `pause` seconds of sleep between them.
public func burnInBursts(seconds: Double, burst: Double, pause: Double) -> UInt64 {
    var sum: UInt64 = 0
    let end = now() + seconds
    while now() < end {
        let stop = min(end, now() + burst)
        while now() < stop { sum &+= crunch(10_000) }
        if now() < end { sleep(pause) }
    }
    return sum
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func now() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

func sleep(_ seconds: Double) {
    var t = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
    nanosleep(&t, nil)
}
