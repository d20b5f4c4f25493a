#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `clock_gettime(CLOCK_MONOTONIC)` in nanoseconds: one clock for the whole machine (on Linux and on
/// Apple platforms), so that times taken in two processes can be subtracted.
enum MonotonicClock {
    static func nanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// Sleeps until `deadline` (a `nanoseconds()` value); returns at once if it has passed.
    static func sleep(until deadline: Int64) {
        while true {
            let left = deadline - nanoseconds()
            if left <= 0 { return }
            var request = timespec(tv_sec: Int(left / 1_000_000_000), tv_nsec: Int(left % 1_000_000_000))
            var remaining = timespec()
            _ = nanosleep(&request, &remaining)
        }
    }
}
