import Foundation

/// What a running `JournalServer` holds, shared by its parts: its open connections, its waiting
/// requests (long polls and event streams), the port it is bound to, and the bytes its event
/// streams have handed to their connections (which, with a client that does not read, stops
/// growing: writes wait until the connection can take more).
final class ServerState: @unchecked Sendable {
    /// Open connections, at most `maxConnections`.
    let connections: ConnectionLimiter
    /// Long polls that wait and event streams, at most `maxStreams`.
    let streams: ConnectionLimiter
    // `@unchecked Sendable`: the variables below are only touched under `lock`.
    private let lock = NSLock()
    private var boundPort: Int?
    private var streamedBytes = 0

    init(_ configuration: JournalServer.Configuration) {
        connections = ConnectionLimiter(maximum: configuration.effectiveMaxConnections)
        streams = ConnectionLimiter(maximum: configuration.effectiveMaxStreams)
    }

    /// The port the server is bound to, once known.
    var port: Int? {
        get { locked { boundPort } }
        set { locked { boundPort = newValue } }
    }

    /// The bytes event streams have written so far (a write counts once it returns).
    var eventBytesWritten: Int { locked { streamedBytes } }

    /// Counts `count` bytes written to an event stream.
    func addEventBytes(_ count: Int) {
        locked { streamedBytes += count }
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}
