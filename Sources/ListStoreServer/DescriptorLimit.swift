#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit of open file descriptors (`RLIMIT_NOFILE`), from which the server derives how
/// many connections it accepts: running out of them would lock out every client.
enum DescriptorLimit {
    /// Descriptors kept for everything but connections: the listening socket, the store's files
    /// (SQLite's database, journal and shared memory, per reader), standard streams, the runtime.
    static let reserve = 64

    /// Descriptors each event loop of the server holds: its `epoll`, an `eventfd` that wakes it,
    /// and a `timerfd` for its scheduled tasks (on Linux; fewer elsewhere).
    static let perEventLoop = 3

    /// The current soft limit (`Int.max` when unlimited or unknown; "unlimited" is the largest value).
    static var current: Int {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return .max }
        return Int(clamping: limit.rlim_cur)
    }

    /// Raises the soft limit to the hard limit (on Darwin, to at most `OPEN_MAX`), and returns the
    /// soft limit now in force.
    @discardableResult
    static func raiseToHardLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return current }
        var target = limit.rlim_max
        #if canImport(Darwin)
        target = min(target, rlim_t(OPEN_MAX))
        #endif
        if target > limit.rlim_cur {
            limit.rlim_cur = target
            _ = setrlimit(resource, &limit)
        }
        return current
    }

    #if canImport(Glibc)
    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resource = RLIMIT_NOFILE
    #endif
}
