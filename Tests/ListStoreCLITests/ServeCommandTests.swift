import Foundation
import ListJSON
import ListDiffTestSupport
import ListStoreTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `serve` and `pull --from` as a user runs them: `liststore serve` in a child process, replicas
/// pulled over HTTP by the built binary.
@Suite(.blockingWaits) struct ServeCommandTests {
    /// Starts `liststore serve … --port 0 extra…` and returns it with its URL.
    static func serve(_ db: String, _ extra: [String] = []) throws -> (StreamingProcess, String) {
        let server = try StreamingProcess(["serve", "--db", db, "--port", "0"] + extra)
        let line = server.waitForLine(timeout: .seconds(60)) { $0.contains("serving") }
        guard let line, let range = line.range(of: "http://") ?? line.range(of: "https://") else {
            server.send(SIGKILL)
            throw CommandFailure("the server did not start: \(server.errorOutput)")
        }
        return (server, String(line[range.lowerBound...].prefix { $0 != " " }))
    }

    struct CommandFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    @Test func serveHandsTheServersOwnOptionsOn() throws {
        let f = try SyncCommandTests.Fixture()
        try f.commit(0)
        // A public address without a token is refused by liststore-server (64), and allowed with
        // its explicit flag, which warns.
        let refused = try CLIRunner.run(["serve", "--db", f.source, "--host", "0.0.0.0", "--port", "0"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--allow-unauthenticated"))
        let bad = try CLIRunner.run(["serve", "--db", f.source, "--port", "0", "--max-connections", "many"])
        #expect(bad.status == 64)
        // Numbers past their bounds are refused before anything opens (a store that cannot be
        // opened, were they not: a run that got past them ends at once all the same).
        let nowhere = f.source + "-missing/s.liststore"
        for (option, value) in [("--idle-timeout", "10000000000"), ("--max-body-mib", "8796093022208"), ("--max-page-mib", "8796093022208")] {
            let refused = try CLIRunner.run(["serve", "--db", nowhere, "--port", "0", option, value])
            #expect(refused.status == 64 && refused.stderr.contains(option), "\(option): \(refused.status) \(refused.stderr)")
        }
        let (server, url) = try Self.serve(f.source, ["--host", "0.0.0.0", "--allow-unauthenticated", "--max-page-mib", "1"])
        defer { _ = server.waitForExit(timeout: .seconds(1)) }
        #expect(url.hasPrefix("http://0.0.0.0:"))
        server.send(SIGTERM)
        #expect(server.waitForExit(timeout: .seconds(30)))
        #expect(server.errorOutput.lowercased().contains("warning"))
    }

    /// A server whose certificate has expired says so when it starts (clients will refuse it), and
    /// a client refused by it is told that dates are among the reasons.
    @Test func anExpiredCertificateIsWarnedOfAndItsRefusalNamesDates() throws {
        let f = try SyncCommandTests.Fixture()
        try f.commit(0)
        let directory = try ListStoreTestSupport.TemporaryDirectory()
        let certificates = try TestCertificates(in: directory)
        let expired = try certificates.expired(in: directory)
        let (server, url) = try Self.serve(f.source, ["--token", "s3cret", "--tls-cert", expired.chain, "--tls-key", expired.key])
        defer {
            server.send(SIGTERM)
            _ = server.waitForExit(timeout: .seconds(30))
        }
        #expect(server.errorOutput.contains("certificate expired on 2020-01-02"), "\(server.errorOutput)")
        let pull = try CLIRunner.run(
            ["pull", "--from", url, "--token", "s3cret", "--ca-cert", certificates.authority, "--list", "inbox", "--replica", f.path("r.liststore")])
        #expect(pull.status == 74, "\(pull.stderr)")
        #expect(pull.stderr.split(separator: "\n").count == 1 && pull.stderr.contains("within its dates"), "\(pull.stderr)")
    }

    /// `serve --tls-cert` and `pull --from https://… --ca-cert`, with an authority made for the test.
    @Test func pullFromAServerOverTLSWithItsCertificateAuthority() throws {
        let f = try SyncCommandTests.Fixture()
        for k in 0..<3 { try f.commit(k) }
        let directory = try ListStoreTestSupport.TemporaryDirectory()
        let certificates = try TestCertificates(in: directory)
        let unreadable = try CLIRunner.run(
            ["serve", "--db", f.source, "--port", "0", "--tls-cert", directory.file("none.pem"), "--tls-key", certificates.key])
        #expect(unreadable.status == 66 && unreadable.stderr.contains("none.pem"), "\(unreadable.stderr)")
        // A key that is not the certificate's (the authority's): refused at start as a file that
        // cannot be used, 66 and one line naming both files, not 1 once the server starts.
        let mismatched = try CLIRunner.run(
            ["serve", "--db", f.source, "--port", "0", "--tls-cert", certificates.chain, "--tls-key", directory.file("ca.key")])
        #expect(mismatched.status == 66, "\(mismatched.status) \(mismatched.stderr)")
        #expect(mismatched.stderr.split(separator: "\n").count == 1 && mismatched.stderr.contains("does not match"), "\(mismatched.stderr)")
        let (server, url) = try Self.serve(f.source, ["--token", "s3cret", "--tls-cert", certificates.chain, "--tls-key", certificates.key])
        defer { _ = server.waitForExit(timeout: .seconds(1)) }
        #expect(url.hasPrefix("https://127.0.0.1:"))
        let replica = f.path("replica.liststore")
        let pull = ["pull", "--from", url, "--token", "s3cret", "--list", "inbox", "--replica", replica, "--json"]

        // Without the authority the handshake fails: one line, exit 74, no replica.
        let untrusted = try CLIRunner.run(pull)
        #expect(untrusted.status == 74, "\(untrusted.stderr)")
        #expect(untrusted.stderr.split(separator: "\n").count == 1 && untrusted.stderr.contains("certificate"), "\(untrusted.stderr)")
        #expect(!FileManager.default.fileExists(atPath: replica))
        let notACertificate = try CLIRunner.run(pull + ["--ca-cert", certificates.key])
        #expect(notACertificate.status == 66, "\(notACertificate.stderr)")

        let trusting = pull + ["--ca-cert", certificates.authority]
        var result = try CLIRunner.run(trusting)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try result.object()["version"] == 3)
        try f.expectReplicaEqualsSource(replica)
        try f.commit(3)
        result = try CLIRunner.run(trusting)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try result.object()["applied"] == 1)
        try f.expectReplicaEqualsSource(replica)
        server.send(SIGTERM)
        #expect(server.waitForExit(timeout: .seconds(30)))
    }

    @Test func pullFromAServerWithAToken() throws {
        let f = try SyncCommandTests.Fixture()
        for k in 0..<3 { try f.commit(k) }
        let (server, url) = try Self.serve(f.source, ["--token", "s3cret"])
        defer { _ = server.waitForExit(timeout: .seconds(1)) }
        let replica = f.path("replica.liststore")
        let pull = ["pull", "--from", url, "--list", "inbox", "--replica", replica, "--json"]

        // Refused tokens: exit 77, one line, no replica.
        for extra in [[], ["--token", "wrong"]] {
            let refused = try CLIRunner.run(pull + extra)
            #expect(refused.status == 77, "\(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1)
            #expect(!FileManager.default.fileExists(atPath: replica))
        }
        var result = try CLIRunner.run(pull + ["--token", "s3cret"])
        #expect(result.status == 0, "\(result.stderr)")
        var document = try result.object()
        #expect(document["version"] == 3 && document["applied"] == 3 && document["resynced"] == false)
        try f.expectReplicaEqualsSource(replica)

        try f.commit(3)
        result = try CLIRunner.run(pull + ["--token", "s3cret"])
        document = try result.object()
        #expect(document["version"] == 4 && document["applied"] == 1)
        try f.expectReplicaEqualsSource(replica)

        // An unknown list and a bad URL change nothing.
        let unknown = try CLIRunner.run(["pull", "--from", url, "--token", "s3cret", "--list", "nope", "--replica", f.path("x.liststore")])
        #expect(unknown.status != 0 && unknown.stderr.contains("nope"))
        #expect(!FileManager.default.fileExists(atPath: f.path("x.liststore")))
        let badURL = try CLIRunner.run(["pull", "--from", "ftp://x", "--list", "inbox", "--replica", f.path("x.liststore")])
        #expect(badURL.status == 64)

        // SIGTERM: a graceful exit with 0.
        server.send(SIGTERM)
        #expect(server.waitForExit(timeout: .seconds(20)))
        #expect(server.process.terminationStatus == 0)
        let gone = try CLIRunner.run(pull + ["--token", "s3cret"])
        #expect(gone.status == 74, "\(gone.stderr)")
    }

    /// With `--long-poll`, the follower long-polls the journal and never asks for the event stream
    /// (the server's request counts).
    @Test(arguments: [false, true]) func followOverHTTPPrintsNewCommitsAndStopsOnSIGINT(longPoll: Bool) throws {
        let f = try SyncCommandTests.Fixture()
        try f.commit(0)
        let (server, url) = try Self.serve(f.source)
        defer {
            server.send(SIGTERM)
            _ = server.waitForExit(timeout: .seconds(20))
        }
        let replica = f.path("replica.liststore")
        let follower = try StreamingProcess(
            ["pull", "--from", url, "--list", "inbox", "--replica", replica, "--follow", "--json"] + (longPoll ? ["--long-poll"] : []))
        #expect(follower.waitForLine(timeout: .seconds(30)) { $0.contains("\"version\":1") } != nil)
        try f.commit(1)
        #expect(follower.waitForLine(timeout: .seconds(30)) { $0.contains("\"version\":2") } != nil)
        try f.commit(2)
        #expect(follower.waitForLine(timeout: .seconds(30)) { $0.contains("\"version\":3") } != nil)
        follower.send(SIGINT)
        #expect(follower.waitForExit(timeout: .seconds(20)))
        #expect(follower.process.terminationStatus == 0, "\(follower.errorOutput)")
        try f.expectReplicaEqualsSource(replica)
        let metrics = String(decoding: try HTTP.request("GET", url + "/metrics").body, as: UTF8.self)
        let requests = metrics.split(separator: "\n").filter { $0.hasPrefix("liststore_http_requests_total") }
        let (streams, polls) = (requests.filter { $0.contains("/events") }, requests.filter { $0.contains("/journal") })
        #expect(streams.isEmpty == longPoll, "\(streams)")
        #expect(!polls.isEmpty)
    }

    /// `--long-poll` follows one list of a server.
    @Test func longPollNeedsOneListOfAServer() throws {
        let f = try SyncCommandTests.Fixture()
        try f.commit(0)
        for arguments in [
            ["pull", "--db", f.source, "--list", "inbox", "--replica", f.path("r.liststore"), "--long-poll"],
            ["pull", "--from", "http://127.0.0.1:9", "--lists", "**", "--replica", f.path("r.liststore"), "--long-poll"],
        ] {
            let refused = try CLIRunner.run(arguments)
            #expect(refused.status == 64 && refused.stderr.contains("--long-poll"), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: f.path("r.liststore")))
        }
    }
}
