import Foundation

/// A value behind a lock (package-visible: the sync client and the server keep their shared state
/// in it too).
///
/// `@unchecked Sendable`: the value is only reached through `withLock`, which holds the lock.
package final class _Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    package init(_ value: Value) {
        self.value = value
    }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
