import Dispatch

/// Values let go of on a serial dispatch queue of the stores', one after another: freeing a large
/// head's items or closing a snapshot's connection holds up neither the writer nor a thread that
/// runs tasks (a serial queue gets a thread of its own when dispatch's others are busy).
///
/// Not API: package-visible for the drivers.
package enum _LetGo {
    private static let queue = DispatchQueue(label: "ListStore.letGo", qos: .utility)

    /// Lets `value` go on the queue, once what was let go of before it has gone.
    package static func later(_ value: some Sendable) {
        queue.async { withExtendedLifetime(value) {} }
    }

    /// Returns once every value let go of before the call has gone (a store that closes waits so
    /// for its snapshots' connections: none of them is left open behind it). Not to be called from
    /// a value's deinitializer.
    package static func waitForEverythingLetGo() {
        queue.sync {}
    }
}
