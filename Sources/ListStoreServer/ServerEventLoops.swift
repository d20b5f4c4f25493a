import ListStoreCore
import NIOCore
import NIOPosix

/// The event loops that serve a `JournalServer`'s connections: NIO's shared group when its size
/// is asked for, otherwise one group of that size for the whole process, started when first
/// asked for and kept as long as the process runs (as NIO keeps its own), so that servers made
/// one after another, and their connections, share their threads.
///
/// The default is twice the cores (`System.coreCount`; Netty and Vert.x also default to twice the
/// cores). A connection stays on the loop that accepted it, and a loop is one thread: when another
/// busy thread of the machine shares a core with one of only as many loops as cores, that loop gets
/// about half of the core while the pairing lasts, and all of its connections wait longer than the
/// other loops'. With 10,000 long-polling followers on two cores (Docs/Benchmarks.md), one loop's
/// requests waited p50 176 ms while the other's waited 50 over a quarter of a second, then the other
/// way round; with four loops the p99 fell from 285 to 196 ms. More loops also take more turns on
/// the cores from the machine's other threads.
///
/// ```swift
/// let group = ServerEventLoops.group(count: ServerEventLoops.defaultCount)
/// ```
enum ServerEventLoops {
    /// Twice the cores NIO counts (which heeds a container's CPU quota on Linux).
    static var defaultCount: Int { 2 * System.coreCount }

    /// The most loops a server takes.
    static let maximum = 1024

    /// The groups made so far, by their number of loops.
    private static let groups = _Locked([Int: MultiThreadedEventLoopGroup]())

    /// The group of `count` loops (1 ≤ `count` ≤ `maximum`): NIO's shared group when it has that
    /// many, otherwise this process's group of that size, made on the first call.
    /// - Complexity: O(1), and the start of `count` threads on the first call with a new count.
    static func group(count: Int) -> any EventLoopGroup {
        precondition((1...maximum).contains(count), "a server takes 1 to \(maximum) event loops")
        if count == NIOSingletons.groupLoopCountSuggestion { return MultiThreadedEventLoopGroup.singleton }
        return groups.withLock { groups in
            if let group = groups[count] { return group }
            let group = MultiThreadedEventLoopGroup(numberOfThreads: count)
            groups[count] = group
            return group
        }
    }
}
