import Foundation
import ListJSON
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Copied, restored and misdirected replicas from the command line, as users run into
/// them: a replica file copied to a second machine and both synced through `liststore serve`, the
/// source and the replica swapped on the command line, a push to another store, a source restored
/// from a backup and `advance-epoch`.
@Suite(.blockingWaits) struct ReplicaIdentityCommandTests {
    typealias Fixture = OfflineCommandTests.Fixture

    /// `cp phone.liststore tablet.liststore`: both edit offline and sync through a server; every
    /// edit reaches the server once, the change pending at the copy too, and both end equal to it.
    @Test func aCopiedReplicaFileSyncedThroughAServerLosesNothing() async throws {
        let f = try Fixture()
        let (server, url) = try ServeCommandTests.serve(f.source, ["--token", "s3cret"])
        defer {
            server.send(SIGTERM)
            _ = server.waitForExit(timeout: .seconds(20))
        }
        let from = ["--from", url, "--token", "s3cret"]
        let (phone, tablet) = (f.path("phone.liststore"), f.path("tablet.liststore"))
        #expect(try await f.run("pull", from, phone)["version"] == 1)
        try await f.commit(phone, ["a", "b", "c", "p"])
        try FileManager.default.copyItem(atPath: phone, toPath: tablet)

        try await f.commit(phone, ["a", "b", "c", "p", "x"])
        try await f.commit(tablet, ["y", "a", "b", "c", "p"])
        for replica in [phone, tablet, phone] {
            let synced = try await f.run("sync", from, replica)
            #expect(synced["pull"]?["pending"].map { $0 == 0 } ?? true, "\(synced)")
        }
        #expect(try await f.elements(f.source) == ["y=y", "a=a", "b=b", "c=c", "p=p", "x=x"])
        try await f.expectEqualToSource(phone)
        try await f.expectEqualToSource(tablet)
        let clients = try await [f.status(phone)["client"], f.status(tablet)["client"]]
        #expect(clients[0] != clients[1], "the copy pushes under a client id of its own")
    }

    /// `pull --db COPY --replica PRIMARY` (swapped) and a push or sync to a store that is not the
    /// replica's source are refused with 65 and change nothing; `--replace` does what was asked.
    @Test func theSwappedPullAndAPushToAnotherStoreAreRefused() async throws {
        let f = try Fixture()
        let replica = f.path("replica.liststore")
        #expect(try await f.run("pull", ["--db", f.source], replica)["version"] == 1)
        try await f.commit(f.source, ["a", "b", "c", "d"])
        let before = try await CLIRunner.runOffPool(["show", "--db", f.source, "--list", "inbox", "--json"]).stdout

        let swapped = try await CLIRunner.runOffPool(["pull", "--db", replica, "--list", "inbox", "--replica", f.source])
        #expect(swapped.status == 65 && swapped.stdout.isEmpty, "\(swapped)")
        #expect(swapped.stderr.contains("has a history of its own") && swapped.stderr.contains("--replace"), "\(swapped.stderr)")
        #expect(swapped.stderr.split(separator: "\n").count == 1)
        #expect(try await CLIRunner.runOffPool(["show", "--db", f.source, "--list", "inbox", "--json"]).stdout == before)
        #expect(try await CLIRunner.runOffPool(["status", "--db", f.source, "--list", "inbox"]).status == 65, "still no replica")

        let other = f.path("other.liststore")
        try await f.commit(other, ["q"])
        try await f.commit(replica, ["a", "b", "c", "mine"])
        for command in ["push", "sync"] {
            let refused = try await CLIRunner.runOffPool([command, "--db", other, "--list", "inbox", "--replica", replica])
            #expect(refused.status == 65, "\(command): \(refused)")
            #expect(refused.stderr.contains("a replica pushes only to its own source"), "\(refused.stderr)")
        }
        // Another server, likewise.
        let (otherServer, otherURL) = try ServeCommandTests.serve(other, [])
        defer {
            otherServer.send(SIGTERM)
            _ = otherServer.waitForExit(timeout: .seconds(20))
        }
        for command in ["push", "sync"] {
            let refused = try await CLIRunner.runOffPool([command, "--from", otherURL, "--list", "inbox", "--replica", replica])
            #expect(refused.status == 65 && refused.stderr.contains("a replica pushes only to its own source"), "\(command): \(refused)")
        }
        #expect(try await f.elements(other) == ["q=q"])
        #expect(try await f.status(replica)["pending"] == 1)

        // Not even told to does the source follow its own replica through a server: a cycle.
        let (server, url) = try ServeCommandTests.serve(replica, [])
        defer {
            server.send(SIGTERM)
            _ = server.waitForExit(timeout: .seconds(20))
        }
        let cycle = try await CLIRunner.runOffPool(["pull", "--from", url, "--list", "inbox", "--replica", f.source, "--replace"])
        #expect(cycle.status == 65 && cycle.stderr.contains("cycle"), "\(cycle)")
        #expect(try await CLIRunner.runOffPool(["show", "--db", f.source, "--list", "inbox", "--json"]).stdout == before)

        // Told to, the pull makes the other store's list a replica of the source.
        let replaced = try await CLIRunner.runOffPool(["pull", "--db", f.source, "--list", "inbox", "--replica", other, "--replace"])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        try await f.expectEqualToSource(other)
    }

    /// A source restored from a backup taken before a push it answered: the operator runs
    /// `advance-epoch`; the replica's next sync resyncs and pushes the change again.
    @Test func advanceEpochAfterARestoreGetsThePushesAgain() async throws {
        let f = try Fixture()
        let replica = f.path("replica.liststore")
        #expect(try await f.run("pull", ["--db", f.source], replica)["version"] == 1)
        let backup = f.path("source.backup")
        try FileManager.default.copyItem(atPath: f.source, toPath: backup)
        try await f.commit(replica, ["a", "b", "c", "mine"])
        #expect(try await f.run("push", ["--db", f.source], replica)["pushed"] == 1)

        try FileManager.default.removeItem(atPath: f.source)
        try FileManager.default.copyItem(atPath: backup, toPath: f.source)
        let advanced = try await CLIRunner.runOffPool(["advance-epoch", "--db", f.source, "--json"])
        #expect(advanced.status == 0 && advanced.stderr.isEmpty, "\(advanced)")
        #expect(try advanced.object()["epoch"] == 2)
        let line = try await CLIRunner.runOffPool(["advance-epoch", "--db", f.source])
        #expect(line.stdout.hasPrefix("\(f.source): epoch 3 (store "), "\(line.stdout)")
        let missing = try await CLIRunner.runOffPool(["advance-epoch", "--db", f.path("nothing.liststore")])
        #expect(missing.status == 66 && !FileManager.default.fileExists(atPath: f.path("nothing.liststore")))

        try await f.commit(f.source, ["a", "b", "c", "theirs"])
        let synced = try await f.run("sync", ["--db", f.source], replica)
        #expect(synced["pull"]?["pending"] == 0 && synced["pull"]?["resynced"] == true, "\(synced)")
        #expect(try await f.elements(f.source) == ["a=a", "b=b", "c=c", "mine=mine", "theirs=theirs"])
        try await f.expectEqualToSource(replica)
    }
}
