import ListStoreCore
import NIOCore
import NIOPosix

/// The event loops that serve a `JournalServer`'s connections: NIO's shared group when its size
/// is asked for, otherwise one group of that size for the whole process, started when first
/// asked for and kept as long as the process runs (as NIO keeps its own), so that servers made
/// one after another, and their connections, share their threads.
///
/// The default is twice the cores (`System.coreCount`). A connection stays on the loop that
/// accepted it, and a loop is one thread: when another busy thread of the machine (the store's
/// readers, a database, the clients of a benchmark) shares a core with one of only as many loops
/// as cores, the operating system leaves that loop about half a core for as long as the pairing
/// lasts, and every connection of that loop waits, while the other loops are idle at times. With
/// more loops than cores each holds fewer connections, and the scheduler spreads the threads over
/// the cores more evenly. (Netty and Vert.x make twice the cores their default for the same
/// reason.)
///
/// ```swift
/// let group = ServerEventLoops.group(count: ServerEventLoops.defaultCount)
/// ```
enum ServerEventLoops {
    /// Twice the cores NIO counts (which heeds a container's CPU quota on Linux).
    static var defaultCount: Int { 2 * System.coreCount }

    /// The groups made so far, by their number of loops.
    private static let groups = _Locked([Int: MultiThreadedEventLoopGroup]())

    /// The group of `count` loops (`count` ≥ 1): NIO's shared group when it has that many,
    /// otherwise this process's group of that size, made on the first call.
    /// - Complexity: O(1), and the start of `count` threads on the first call with a new count.
    static func group(count: Int) -> any EventLoopGroup {
        precondition(count >= 1, "a server needs at least one event loop")
        if count == NIOSingletons.groupLoopCountSuggestion { return MultiThreadedEventLoopGroup.singleton }
        return groups.withLock { groups in
            if let group = groups[count] { return group }
            let group = MultiThreadedEventLoopGroup(numberOfThreads: count)
            groups[count] = group
            return group
        }
    }
}
