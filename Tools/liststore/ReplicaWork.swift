import Dispatch
import Foundation
import ListStore
import ListSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The replica work of `pull` and `sync`: once, or (`--follow`) round after round until SIGINT or
/// SIGTERM, waiting out a server that goes away for a while; every error becomes one line with its
/// exit code.
enum ReplicaWork {
    /// Runs `body`, with `following` until the first SIGINT or SIGTERM (then it returns, and the
    /// command exits with 0; a second signal ends the process at once).
    /// - Throws: `CommandFailure` for the errors of either store, of the replication or of the server.
    static func run(following: Bool, _ body: @escaping @Sendable () async throws -> Void) async throws {
        try await cancelling(on: following ? [SIGINT, SIGTERM] : []) {
            do {
                try await body()
            } catch is CancellationError {
                // Stopped by a signal.
            } catch {
                throw SyncFailure.mapped(error)
            }
        }
    }

    /// Runs `body` in a task of its own that the first of `signals` cancels (the body decides how to
    /// stop, and the command then exits as the body says, usually 0); a second one ends the process
    /// at once with 128 + the signal's number.
    private static func cancelling(on signals: [Int32], _ body: @escaping @Sendable () async throws -> Void) async throws {
        guard !signals.isEmpty else { return try await body() }
        let task = Task { try await body() }
        let received = _Locked(false)
        let queue = DispatchQueue(label: "liststore.signals")
        let sources = signals.map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)  // the dispatch source hears it instead
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                let again = received.withLock { received in
                    defer { received = true }
                    return received
                }
                if again { _exit(128 + number) }  // output is unbuffered: nothing is lost
                task.cancel()
            }
            source.resume()
            return source
        }
        defer {
            for source in sources { source.cancel() }
        }
        try await task.value
    }

    /// Follows `source` into `replica` (see `Replica.follow`), syncing with `pushing`; with a retry
    /// policy (a server), an outage is waited out and announced on stderr.
    static func follow(
        _ replica: Replica<some ReplicaStore>, from source: any ListSource, retrying retry: RetryPolicy?, options: ReplicaPullOptions,
        pushing: Bool, onPull: (ReplicaPullResult) async throws -> Void
    ) async throws {
        try await replica.follow(from: source, options: options, pushing: pushing, retrying: retry, onEvent: announce, onPull: onPull)
    }

    /// Says on stderr, once per outage, that the server was lost and when the follower tries again,
    /// and that it is back.
    @Sendable static func announce(_ event: FollowEvent) {
        switch event {
        case .retrying(let error, 1, let delay):
            Terminal.errorLine("lost the server (\(error)), retrying in \(seconds(delay)) s")
        case .retrying:
            break
        case .reconnected:
            Terminal.errorLine("reconnected")
        }
    }

    /// `0.5`, `2`: a delay in seconds, rounded to a tenth.
    private static func seconds(_ delay: Duration) -> String {
        let tenths = (Double(delay.components.seconds) * 10 + Double(delay.components.attoseconds) / 1e17).rounded()
        return tenths.truncatingRemainder(dividingBy: 10) == 0 ? "\(Int(tenths / 10))" : "\(tenths / 10)"
    }
}
