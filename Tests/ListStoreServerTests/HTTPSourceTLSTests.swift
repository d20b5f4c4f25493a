import Foundation
import ListDiffTestSupport
import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import ListSync
import Testing

/// `HTTPSource` with its own certificate authorities, against a `JournalServer` over TLS whose
/// certificate an authority made for the test signed.
/// Its tests make certificates with `openssl`, which blocks: on threads of their own (`.blockingWaits`).
@Suite(.blockingWaits) struct HTTPSourceTLSTests {
    // Three minutes: its TLS handshakes run BoringSSL built without optimization (a debug build),
    // and while every suite starts at once on two cores a handshake took seconds, which put this
    // test past one minute in CI without anything being stuck.
    @Test(.timeLimit(.minutes(3))) func aSourceThatTrustsTheAuthorityPullsAndFollowsOverTLS() async throws {
        let directory = try TemporaryDirectory()
        let certificates = try TestCertificates(in: directory)
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        let tls = try JournalServer.tlsConfiguration(certificateChainFile: certificates.chain, privateKeyFile: certificates.key)
        try await ServerHarness.with(store, .init(port: 0, token: "t", keepAliveInterval: .seconds(1), tls: tls)) { server in
            var source = try HTTPSource("https://127.0.0.1:\(server.port)", token: "t")
            source.certificateAuthorities = try .init(pemFile: certificates.authority)

            // A pull, then the changes as they land, through the event stream.
            let replica = Replica(store: try Store(path: directory.file("r.liststore")), list: "l")
            #expect(try await replica.pull(from: source).version == 1)
            let trusted = source
            let follower = Task {
                var versions: [Int] = []
                for try await change in trusted.changes(after: Cursor(store: try await store.identity(), list: "l", version: 1)) {
                    versions.append(change.entry.version)
                    if versions.count == 3 { break }
                }
                return versions
            }
            try await LimitTests.waitUntil { server.server.waitingCount == 1 }
            for k in 2...4 { try await store.commit(linearList(3 + k), to: "l") }
            #expect(try await follower.value == [2, 3, 4])
            #expect(try await replica.pull(from: source).version == 4)
            #expect(try await replica.store.snapshot(of: "l").sections == store.snapshot(of: "l").sections)

            // The answer limit holds on this path too.
            var small = source
            small.maxAnswerBytes = 64
            await #expect {
                try await small.snapshot(of: "l", at: nil)
            } throws: { "\($0)".contains("larger than") }

            // Another authority's certificates are not trusted: a lasting failure, said to be TLS's.
            let otherDirectory = try TemporaryDirectory()
            let other = try TestCertificates(in: otherDirectory)
            var stranger = source
            stranger.certificateAuthorities = try .init(pemFile: other.authority)
            await #expect {
                try await stranger.identity()
            } throws: { error in
                guard case SyncError.transport(let message, let transient) = error else { return false }
                return message.contains("TLS handshake") && !transient
            }
            // Without authorities, the system's are used, which do not know this one.
            var system = source
            system.certificateAuthorities = nil
            await #expect(throws: SyncError.self) { try await system.identity() }
            #expect(throws: SyncError.self) { try HTTPSource.CertificateAuthorities(pemFile: certificates.key) }
        }
    }

    /// Event streams hold HTTP/1.1 connections of their own: over one HTTP/2 connection, the
    /// server's hundred or so streams per connection would be taken by as many followers, and every
    /// other request would wait.
    ///
    /// 240 TLS handshakes (both ends) in a debug build, while every other suite starts: the server
    /// and the client are given the time that takes (a head timeout and an idle timeout of their own,
    /// which this test is not about).
    @Test(.timeLimit(.minutes(3))) func manyFollowersOverTLSLeaveRoomForOtherRequests() async throws {
        let directory = try TemporaryDirectory()
        let certificates = try TestCertificates(in: directory)
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        let tls = try JournalServer.tlsConfiguration(certificateChainFile: certificates.chain, privateKeyFile: certificates.key)
        try await ServerHarness.with(store, .init(port: 0, keepAliveInterval: .seconds(30), tls: tls)) { server in
            var source = try HTTPSource("https://127.0.0.1:\(server.port)")
            source.certificateAuthorities = try .init(pemFile: certificates.authority)
            source.idleTimeout = .seconds(120)
            let cursor = Cursor(store: try await store.identity(), list: "l", version: 1)
            let trusted = source
            let followers = (0..<120).map { _ in
                Task {
                    for try await change in trusted.changes(after: cursor) { return change.entry.version }
                    return 0
                }
            }
            defer { for follower in followers { follower.cancel() } }
            try await LimitTests.waitUntil(within: .seconds(120)) { server.server.waitingCount == 120 }
            #expect(server.server.waitingCount == 120)
            #expect(try await source.summary(of: "l").version == 1)
            try await store.commit(linearList(4), to: "l")
            for follower in followers { #expect(try await follower.value == 2) }
        }
    }

    @Test(.timeLimit(.minutes(1))) func aServerThatNeverAnswersFailsTheRequestAfterTheIdleTimeout() async throws {
        let directory = try TemporaryDirectory()
        let certificates = try TestCertificates(in: directory)
        // A port whose connections the kernel accepts and no one reads: the handshake never ends.
        let (fd, port) = try RawSocket.listening()
        defer { close(fd) }
        var source = try HTTPSource("https://127.0.0.1:\(port)")
        source.certificateAuthorities = try .init(pemFile: certificates.authority)
        source.idleTimeout = .seconds(1)
        // Without the idle timeout the handshake never ends, and the test runs into its time limit.
        await #expect {
            _ = try await source.identity()
        } throws: { error in
            guard case SyncError.transport(let message, let transient) = error else { return false }
            return transient && message.contains("timed out")
        }
    }
}
