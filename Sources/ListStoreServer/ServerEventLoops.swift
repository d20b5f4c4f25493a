import ListStoreCore
import NIOCore
import NIOPosix

/// The event loops that serve a `JournalServer`'s connections: NIO's shared group when its size
/// is asked for, otherwise one group of that size for the whole process, kept as long as the
/// process runs (as NIO keeps its own), so that servers made one after another share their threads.
/// Why the default is twice the cores (as in Netty and Vert.x), with measurements:
/// RunningAServer.md, “Threads”.
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
