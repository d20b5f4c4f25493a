import ListStoreCore
import NIOCore
import NIOPosix

extension PostgresStore {
    /// Fails at once when the server's address cannot be reached at all: its name does not resolve,
    /// or nothing listens on its port. postgres-nio's pool retries a refused connection until the
    /// open timeout, so without this a mistyped port would take that long to report. One TCP
    /// connection is opened and closed; a connection that neither succeeds nor fails within
    /// `timeout` (a firewall that drops packets) leaves the verdict to the open itself.
    ///
    /// - Throws: `StoreError` `.io`, with the reason.
    static func checkReachable(host: String, port: Int, location: String, timeout: Duration) async throws {
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(TimeAmount.nanoseconds(Int64(clamping: timeout.components.seconds) * 1_000_000_000))
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch ChannelError.connectTimeout {
            return
        } catch {
            throw StoreError(.io, "cannot reach the store at \(location): \(Self.reason(error))")
        }
        try? await channel.close()
    }

    /// What a failed connection says, in a few words.
    private static func reason(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            if error.dnsAError != nil || error.dnsAAAAError != nil, error.connectionErrors.isEmpty {
                return "the name \(error.host) does not resolve"
            }
            if let first = error.connectionErrors.first { return Self.reason(first.error) }
        }
        if let error = error as? IOError, error.errnoCode == ECONNREFUSED { return "connection refused" }
        return "\(error)"
    }
}
