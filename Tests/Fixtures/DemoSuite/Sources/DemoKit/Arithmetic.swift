/// Small integer helpers used across the demo.
public enum Arithmetic {
    public enum Failure: Error, Equatable {
        case divisionByZero
        case overflow
    }

    public static func add(_ a: Int, _ b: Int) -> Int { a + b }
    public static func subtract(_ a: Int, _ b: Int) -> Int { a - b }
    public static func multiply(_ a: Int, _ b: Int) -> Int { a * b }

    public static func divide(_ a: Int, by b: Int) throws -> Int {
        guard b != 0 else { throw Failure.divisionByZero }
        return a / b
    }

    public static func gcd(_ a: Int, _ b: Int) -> Int {
        var (x, y) = (abs(a), abs(b))
        while y != 0 { (x, y) = (y, x % y) }
        return x
    }

    public static func lcm(_ a: Int, _ b: Int) -> Int {
        guard a != 0, b != 0 else { return 0 }
        return abs(a / gcd(a, b) * b)
    }

    public static func isPrime(_ n: Int) -> Bool {
        guard n >= 2 else { return false }
        if n < 4 { return true }
        if n % 2 == 0 { return false }
        var d = 3
        while d * d <= n {
            if n % d == 0 { return false }
            d += 2
        }
        return true
    }

    public static func primes(upTo limit: Int) -> [Int] {
        guard limit >= 2 else { return [] }
        var sieve = [Bool](repeating: true, count: limit + 1)
        sieve[0] = false
        sieve[1] = false
        var i = 2
        while i * i <= limit {
            if sieve[i] {
                var j = i * i
                while j <= limit { sieve[j] = false; j += i }
            }
            i += 1
        }
        return sieve.indices.filter { sieve[$0] }
    }

    public static func factorial(_ n: Int) throws -> Int {
        precondition(n >= 0, "factorial of a negative number")
        var result = 1
        for k in stride(from: 2, through: n, by: 1) {
            let (product, overflow) = result.multipliedReportingOverflow(by: k)
            if overflow { throw Failure.overflow }
            result = product
        }
        return result
    }

    public static func fibonacci(_ n: Int) -> Int {
        var (a, b) = (0, 1)
        for _ in 0..<n { (a, b) = (b, a + b) }
        return a
    }

    public static func clamp<T: Comparable>(_ value: T, to range: ClosedRange<T>) -> T {
        min(max(value, range.lowerBound), range.upperBound)
    }
}
