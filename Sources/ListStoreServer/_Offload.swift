import Dispatch

/// Runs blocking store work (SQLite reads and commits) on a dispatch queue, so that it never holds
/// one of the few threads that serve requests.
enum _Offload {
    private static let queue = DispatchQueue(label: "liststore.server.store", qos: .userInitiated, attributes: .concurrent)

    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}
