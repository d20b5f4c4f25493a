import Foundation
import ListDiffTestSupport
import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import Testing

/// `JournalServer` over TLS, with a certificate authority and a server certificate made for the
/// test (by `openssl`), and `curl` as the client: HTTP/2 and HTTP/1.1 by ALPN.
/// Its tests make certificates with `openssl`, which blocks: on threads of their own (`.blockingWaits`).
@Suite(.blockingWaits) struct TLSTests {
    /// `curl` on a thread of its own (it blocks): the status and what it printed.
    static func curl(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try TestCertificates.run("curl", ["-sS"] + arguments, check: false) })
            }.start()
        }
    }

    // Three minutes: its TLS handshakes run BoringSSL built without optimization (a debug build),
    // and while every suite starts at once on two cores a handshake took seconds, which put this
    // test past one minute in CI without anything being stuck.
    @Test(.timeLimit(.minutes(3))) func serversSpeakHTTP2AndHTTP1OverTLSWithTheirCertificate() async throws {
        let directory = try TemporaryDirectory()
        let certificates = try TestCertificates(in: directory)
        let store = try Store(path: directory.file("tls.liststore"))
        try await store.commit(linearList(3), to: "l")
        let tls = try JournalServer.tlsConfiguration(certificateChainFile: certificates.chain, privateKeyFile: certificates.key)
        // A head timeout longer than the time the handshakes may take on a loaded machine (it counts
        // from the connection's start on TLS; this test is not about it).
        let stream = try await ServerHarness.with(store, .init(port: 0, token: "t", keepAliveInterval: .seconds(1), tls: tls)) { server in
            let base = "https://127.0.0.1:\(server.port)"
            let trusted = ["--cacert", certificates.authority, "-H", "Authorization: Bearer t", "-w", "\n%{http_version} %{http_code}"]

            for (flag, version) in [("--http2", "2"), ("--http1.1", "1.1")] {
                let answer = try await Self.curl(trusted + [flag, "\(base)/v1/lists"])
                #expect(answer.status == 0, "\(flag): \(answer)")
                #expect(answer.output.contains("\"name\":\"l\"") && answer.output.hasSuffix("\n\(version) 200"), "\(flag): \(answer.output)")
            }
            // The server's own origin is its https one.
            for (origin, status) in [("https://127.0.0.1:\(server.port)", "200"), ("http://127.0.0.1:\(server.port)", "403")] {
                let answer = try await Self.curl(trusted + ["-H", "Origin: \(origin)", "\(base)/v1/store"])
                #expect(answer.output.hasSuffix(" \(status)"), "\(origin): \(answer.output)")
            }
            // A client that does not trust the authority stops at the handshake (curl's 60).
            #expect(try await Self.curl(["\(base)/v1/lists"]).status == 60)
            // Plain HTTP on the TLS port is not answered as HTTP.
            let plain = try await Self.curl(["-w", "%{http_code}", "http://127.0.0.1:\(server.port)/health"])
            #expect(plain.status != 0 && !plain.output.hasPrefix("200"), "\(plain)")

            // An event stream over HTTP/2 gets a commit made while it waits at the head. The stream
            // ends when the server stops, once it has written the commit's event (the test's time
            // limit bounds a stream that never brings it: a deadline of curl's own gave up while a
            // handshake of the debug build took seconds on a loaded machine; the wait below is a
            // bound for a failing test, within the time limit).
            let stream = Task { try await Self.curl(trusted + ["--http2", "-N", "\(base)/v1/lists/l/events?since=0"]) }
            try await LimitTests.waitUntil(within: .seconds(120)) { server.server.waitingCount == 1 }
            let written = server.server.state.eventBytesWritten
            try await store.commit(linearList(4), to: "l")
            try await LimitTests.waitUntil { server.server.state.eventBytesWritten > written }
            return stream
        }
        let events = try await stream.value
        #expect(events.output.contains("id: 1\n") && events.output.contains("id: 2\n"), "\(events.output)")
    }

    /// At the cap on connections, a TLS client is served in place of the connection idle longest:
    /// here raw connections that never start their handshake, closed oldest first (`IdleConnections`
    /// counts a connection idle from its start), never through a goodbye the peer would have to answer.
    @Test(.timeLimit(.minutes(2))) func aFloodOfSilentConnectionsGivesWayToTLSClients() async throws {
        let directory = try TemporaryDirectory()
        let certificates = try TestCertificates(in: directory)
        let store = try Store(path: directory.file("tls.liststore"))
        try await store.commit(linearList(3), to: "l")
        let tls = try JournalServer.tlsConfiguration(certificateChainFile: certificates.chain, privateKeyFile: certificates.key)
        // Timeouts of an hour: only room for new clients may close the flood's connections here.
        let configuration = JournalServer.Configuration(
            port: 0, maxConnections: 8, maxStreams: 2, idleTimeout: .seconds(3600), tls: tls)
        try await ServerHarness.with(store, configuration) { server in
            let (port, state) = (server.port, server.server.state)
            var flood: [RawConnection] = []
            for _ in 0..<8 {
                flood.append(try RawConnection(port: port))
                try await LimitTests.waitUntil { state.idleConnections.count == flood.count }
            }
            for _ in 0..<3 {
                let answer = try await Self.curl(
                    ["--cacert", certificates.authority, "--http1.1", "-w", "\n%{http_code}", "https://127.0.0.1:\(port)/v1/lists"])
                #expect(answer.status == 0 && answer.output.hasSuffix("\n200"), "\(answer)")
            }
            let connections = flood
            let closed = try await RawConnection.run { connections.map { $0.receive(timeout: .milliseconds(1)).closed } }
            // The oldest went first: closed ones, then open ones (a client's place is free again once
            // its connection is counted out, so one to three were closed).
            let count = closed.prefix { $0 }.count
            #expect((1...3).contains(count) && closed.dropFirst(count).allSatisfy { !$0 }, "\(closed)")
            try await LimitTests.waitUntil { state.connections.current == 8 - count }
        }
    }

    @Test func unusableCertificateFilesAreNamed() throws {
        let directory = try TemporaryDirectory()
        let certificates = try TestCertificates(in: directory)
        let missing = directory.file("missing.pem")
        #expect {
            try JournalServer.tlsConfiguration(certificateChainFile: missing, privateKeyFile: certificates.key)
        } throws: { ($0 as? JournalServer.TLSFileError)?.file == missing }
        // The key given as the certificate, and the certificate as the key.
        #expect {
            try JournalServer.tlsConfiguration(certificateChainFile: certificates.key, privateKeyFile: certificates.key)
        } throws: { ($0 as? JournalServer.TLSFileError)?.file == certificates.key }
        #expect {
            try JournalServer.tlsConfiguration(certificateChainFile: certificates.chain, privateKeyFile: certificates.chain)
        } throws: { ($0 as? JournalServer.TLSFileError)?.file == certificates.chain }
    }
}
