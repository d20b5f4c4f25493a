import Foundation

/// A value behind a lock.
///
/// `@unchecked Sendable`: the value is only reached through `withLock`, which holds the lock.
final class _Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
