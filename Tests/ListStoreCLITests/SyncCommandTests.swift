import Foundation
import ListJSON
import ListStore
import ListDiffTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `pull`, `prune` and `consumers` run as a user runs them: the built binary, its stdout, stderr and
/// exit code.
@Suite(.blockingWaits) struct SyncCommandTests {
    static let documents = [
        #"{"sections":[{"id":"today","content":{"title":"Today"},"elements":[{"id":"m1","content":{"text":"hi"}},{"id":"m2"}]},{"id":"later","elements":[{"id":"m3","content":18446744073709551615}]}]}"#,
        #"{"sections":[{"id":"later","elements":[{"id":"m3","content":18446744073709551615},{"id":"m1","content":{"text":"hi!"}}]},{"id":"today","content":{"title":"Today"},"elements":[{"id":"m4","content":[1,2]}]}]}"#,
        #"{"sections":[{"id":"later","elements":[{"id":"m1","content":{"text":"hi!"}}]},{"id":"new","content":0.5,"elements":[{"id":"m5","content":"x"},{"id":"m3","content":1}]}]}"#,
        #"{"sections":[{"id":"new","content":0.25,"elements":[{"id":"m3","content":1},{"id":"m6"},{"id":"m5","content":"y"}]}]}"#,
    ]

    /// A directory with a source store and the snapshot files to commit to it.
    struct Fixture {
        let dir: TemporaryDirectory
        let source: String
        let files: [String]

        init() throws {
            let dir = try TemporaryDirectory()
            self.dir = dir
            source = dir.url.appendingPathComponent("source.liststore").path
            files = try SyncCommandTests.documents.enumerated().map { try dir.file("v\($0.offset + 1).json", $0.element) }
        }

        func path(_ name: String) -> String { dir.url.appendingPathComponent(name).path }

        /// Commits document `k` (0-based, cycling) to `inbox` in the source.
        func commit(_ k: Int) throws {
            let result = try CLIRunner.run(["commit", "--db", source, "--list", "inbox", "--file", files[k % files.count]])
            #expect(result.status == 0, "\(result.stderr)")
        }

        /// `liststore pull --db source --list inbox --replica replica --json extra…`, decoded.
        func pull(_ replica: String, _ extra: [String] = []) throws -> JSONObject {
            let result = try CLIRunner.run(["pull", "--db", source, "--list", "inbox", "--replica", replica, "--json"] + extra)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.isEmpty)
            return try result.object()
        }

        /// `show --json` of `inbox` in `store`, decoded.
        func show(_ store: String) throws -> JSONObject {
            let result = try CLIRunner.run(["show", "--db", store, "--list", "inbox", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            return try result.object()
        }

        /// Expects the replica's head to hold the source's head: same digest, same sections.
        func expectReplicaEqualsSource(_ replica: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            var source = try show(self.source)
            var copy = try show(replica)
            #expect(source["digest"] == copy["digest"], sourceLocation: sourceLocation)
            source["version"] = nil
            copy["version"] = nil
            #expect(source == copy, sourceLocation: sourceLocation)
            let verify = try CLIRunner.run(["verify", "--db", replica])
            #expect(verify.status == 0, "\(verify.stdout)", sourceLocation: sourceLocation)
        }

        /// `consumers --json`: name → version.
        func consumers() throws -> [String: Int] {
            let result = try CLIRunner.run(["consumers", "--db", source, "--list", "inbox", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            guard case .array(let consumers)? = try result.object()["consumers"] else { return [:] }
            var versions: [String: Int] = [:]
            for case .object(let consumer) in consumers {
                guard case .string(let name)? = consumer["name"], case .number(let version)? = consumer["version"] else { continue }
                versions[name] = Int(version.description)
            }
            return versions
        }
    }

    @Test func pullCreatesAReplicaEqualToTheSourceThenAppliesOnlyNewCommits() throws {
        let f = try Fixture()
        let replica = f.path("replica.liststore")
        try f.commit(0)
        try f.commit(1)

        let first = try f.pull(replica)
        #expect(first.keys == ["applied", "list", "reason", "resynced", "schemaVersion", "version"])
        #expect(first["schemaVersion"] == 1 && first["list"] == "inbox" && first["version"] == 2)
        #expect(first["applied"] == 2 && first["resynced"] == false && first["reason"] == .null)
        // Pulled commit by commit from version 0, the replica's versions are the source's.
        #expect(try CLIRunner.run(["show", "--db", f.source, "--list", "inbox", "--json"]).stdout
            == CLIRunner.run(["show", "--db", replica, "--list", "inbox", "--json"]).stdout)

        try f.commit(2)
        let second = try CLIRunner.run(["pull", "--db", f.source, "--list", "inbox", "--replica", replica])
        #expect(second.status == 0 && second.stderr.isEmpty)
        #expect(second.stdout == "\(replica): inbox at source version 3 (1 commit applied)\n")
        #expect(try CLIRunner.run(["show", "--db", f.source, "--list", "inbox", "--json"]).stdout
            == CLIRunner.run(["show", "--db", replica, "--list", "inbox", "--json"]).stdout)
        let third = try CLIRunner.run(["pull", "--db", f.source, "--list", "inbox", "--replica", replica])
        #expect(third.stdout == "\(replica): inbox at source version 3 (up to date)\n")
        let again = try f.pull(replica)
        #expect(again["applied"] == 0 && again["version"] == 3 && again["resynced"] == false)

        // The replica's journal is the source's, digest for digest.
        let sourceLog = try CLIRunner.run(["log", "--db", f.source, "--list", "inbox", "--json"]).object()
        let replicaLog = try CLIRunner.run(["log", "--db", replica, "--list", "inbox", "--json"]).object()
        guard case .array(let sourceCommits)? = sourceLog["commits"], case .array(let replicaCommits)? = replicaLog["commits"] else {
            Issue.record("no commits"); return
        }
        #expect(replicaCommits.count == 3)
        for (ours, theirs) in zip(replicaCommits, sourceCommits) {
            guard case .object(let ours) = ours, case .object(let theirs) = theirs else { continue }
            #expect(ours["version"] == theirs["version"] && ours["digest"] == theirs["digest"] && ours["stages"] == theirs["stages"])
        }
        try f.expectReplicaEqualsSource(replica)

        // --catch-up: one changeset to the head.
        let caughtUp = f.path("caught-up.liststore")
        let catchUp = try f.pull(caughtUp, ["--catch-up"])
        #expect(catchUp["applied"] == 1 && catchUp["version"] == 3 && catchUp["resynced"] == false)
        try f.expectReplicaEqualsSource(caughtUp)
        try f.commit(3)
        let line = try CLIRunner.run(["pull", "--db", f.source, "--list", "inbox", "--replica", caughtUp, "--catch-up"])
        #expect(line.stdout == "\(caughtUp): inbox at source version 4 (caught up in one changeset)\n")
        try f.expectReplicaEqualsSource(caughtUp)
    }

    @Test func aStaleReplicaResyncsByDiffAfterPruning() throws {
        let f = try Fixture()
        let replica = f.path("replica.liststore")
        try f.commit(0)
        try f.commit(1)
        #expect(try f.pull(replica)["version"] == 2)
        try f.commit(2)
        try f.commit(3)

        let pruned = try CLIRunner.run(["prune", "--db", f.source, "--list", "inbox", "--keep-last", "1", "--json"])
        #expect(pruned.status == 0 && pruned.stderr.isEmpty)
        let result = try pruned.object()
        #expect(result.keys == ["abandonedUploads", "base", "head", "heldBy", "list", "previousBase", "releasedBlobs", "removed", "removedPushRecords", "schemaVersion"])
        #expect(result["previousBase"] == 0 && result["base"] == 3 && result["head"] == 4 && result["removed"] == 3)
        #expect(result["removedPushRecords"] == 0)
        #expect(result["heldBy"] == [] && result["list"] == "inbox" && result["schemaVersion"] == 1)
        // The history from the base on is still there.
        #expect(try CLIRunner.run(["show", "--db", f.source, "--list", "inbox", "--at", "3"]).status == 0)
        #expect(try CLIRunner.run(["show", "--db", f.source, "--list", "inbox", "--at", "2"]).status == 65)

        let resynced = try f.pull(replica)
        #expect(resynced["resynced"] == true && resynced["reason"] == "pruned" && resynced["version"] == 4)
        #expect(resynced["applied"] == 1)
        try f.expectReplicaEqualsSource(replica)
        let line = try CLIRunner.run(["pull", "--db", f.source, "--list", "inbox", "--replica", replica])
        #expect(line.stdout == "\(replica): inbox at source version 4 (up to date)\n")

        // A new replica of a pruned list starts by diff too, and says why.
        let fresh = f.path("fresh.liststore")
        let first = try CLIRunner.run(["pull", "--db", f.source, "--list", "inbox", "--replica", fresh])
        #expect(first.stdout == "\(fresh): inbox at source version 4, resynced by diff (pruned) in 1 page\n")
        try f.expectReplicaEqualsSource(fresh)

        let human = try CLIRunner.run(["prune", "--db", f.source, "--list", "inbox", "--before", "4"])
        #expect(human.stdout == "'inbox': 1 journal entry removed; the history now starts at version 4 (was 3; head 4).\n")
        let nothing = try CLIRunner.run(["prune", "--db", f.source, "--list", "inbox", "--keep-last", "5"])
        #expect(nothing.stdout == "'inbox': nothing pruned; the history still starts at version 4 (head 4).\n")
    }

    @Test func pruneStopsAtARegisteredConsumerUnlessForced() throws {
        let f = try Fixture()
        let replica = f.path("laptop.liststore")
        try f.commit(0)
        try f.commit(1)
        #expect(try f.pull(replica, ["--as", "laptop"])["version"] == 2)
        #expect(try f.consumers() == ["laptop": 2])
        try f.commit(2)
        try f.commit(3)

        let held = try CLIRunner.run(["prune", "--db", f.source, "--list", "inbox", "--keep-last", "0", "--json"]).object()
        #expect(held["base"] == 2 && held["previousBase"] == 0 && held["head"] == 4 && held["removed"] == 2)
        #expect(held["heldBy"] == ["laptop"])
        let human = try CLIRunner.run(["prune", "--db", f.source, "--list", "inbox", "--keep-last", "0"])
        #expect(human.stdout == """
            'inbox': nothing pruned; the history still starts at version 2 (head 4).
            Held back by consumer 'laptop' (--force prunes past them).

            """)

        // The replica still replays the journal, and acknowledges.
        let pulled = try f.pull(replica, ["--as", "laptop"])
        #expect(pulled["version"] == 4 && pulled["applied"] == 2 && pulled["resynced"] == false)
        #expect(try f.consumers() == ["laptop": 4])

        try f.commit(0)
        try f.commit(1)
        let stillHeld = try CLIRunner.run(["prune", "--db", f.source, "--list", "inbox", "--keep-last", "0", "--json"]).object()
        #expect(stillHeld["base"] == 4 && stillHeld["removed"] == 2 && stillHeld["heldBy"] == ["laptop"])
        let forced = try CLIRunner.run(["prune", "--db", f.source, "--list", "inbox", "--keep-last", "0", "--force", "--json"]).object()
        #expect(forced["previousBase"] == 4 && forced["base"] == 6 && forced["removed"] == 2 && forced["heldBy"] == [])

        let resynced = try f.pull(replica, ["--as", "laptop"])
        #expect(resynced["resynced"] == true && resynced["reason"] == "pruned" && resynced["version"] == 6)
        #expect(try f.consumers() == ["laptop": 6])
        try f.expectReplicaEqualsSource(replica)
    }

    @Test func consumersAreRegisteredListedAndUnregistered() throws {
        let f = try Fixture()
        for k in 0..<3 { try f.commit(k) }
        let none = try CLIRunner.run(["consumers", "--db", f.source, "--list", "inbox"])
        #expect(none.status == 0 && none.stdout == "'inbox': no consumers registered.\n")

        let phone = try CLIRunner.run(["consumers", "--db", f.source, "--list", "inbox", "--register", "phone", "--at", "2"])
        #expect(phone.status == 0 && phone.stderr.isEmpty)
        #expect(phone.stdout == "'inbox': consumer 'phone' registered at version 2; pruning keeps the journal after it.\n")
        let tablet = try CLIRunner.run(["consumers", "--db", f.source, "--list", "inbox", "--register", "tablet", "--json"])
        let document = try tablet.object()
        #expect(document.keys == ["consumers", "list", "schemaVersion"] && document["list"] == "inbox")
        guard case .array(let consumers)? = document["consumers"], case .object(let first)? = consumers.first else {
            Issue.record("no consumers: \(tablet.stdout)"); return
        }
        #expect(first.keys == ["acknowledgedAt", "name", "registeredAt", "version"])
        #expect(try f.consumers() == ["phone": 2, "tablet": 0])
        let table = try CLIRunner.run(["consumers", "--db", f.source, "--list", "inbox"])
        #expect(table.stdout.hasPrefix("consumer  version  registered at"))
        #expect(table.stdout.split(separator: "\n").count == 3)

        let both = try CLIRunner.run(["prune", "--db", f.source, "--list", "inbox", "--before", "3", "--json"]).object()
        #expect(both["base"] == 0 && both["removed"] == 0 && both["heldBy"] == ["phone", "tablet"])
        let gone = try CLIRunner.run(["consumers", "--db", f.source, "--list", "inbox", "--unregister", "tablet"])
        #expect(gone.status == 0 && gone.stdout == "'inbox': consumer 'tablet' unregistered.\n")
        let one = try CLIRunner.run(["prune", "--db", f.source, "--list", "inbox", "--before", "3", "--json"]).object()
        #expect(one["base"] == 2 && one["removed"] == 2 && one["heldBy"] == ["phone"])
        // Registering again moves the version.
        #expect(try CLIRunner.run(["consumers", "--db", f.source, "--list", "inbox", "--register", "phone", "--at", "3"]).status == 0)
        #expect(try f.consumers() == ["phone": 3])
        let unregistered = try CLIRunner.run(["consumers", "--db", f.source, "--list", "inbox", "--unregister", "phone", "--json"])
        #expect(try unregistered.object()["consumers"] == [])
    }

    @Test func badInputGetsOneLineAndChangesNothing() throws {
        let f = try Fixture()
        for k in 0..<3 { try f.commit(k) }
        let replica = f.path("replica.liststore")
        #expect(try CLIRunner.run(["consumers", "--db", f.source, "--list", "inbox", "--register", "phone", "--at", "1"]).status == 0)
        let notes = try f.dir.file("notes.txt", "not a database\n")
        let missing = f.path("missing.liststore")
        let source = f.source
        let cases: [([String], Int32)] = [
            (["prune", "--db", source, "--list", "inbox"], 64),
            (["prune", "--db", source, "--list", "inbox", "--keep-last", "1", "--before", "2"], 64),
            (["prune", "--db", source, "--list", "inbox", "--keep-last", "-1"], 64),
            (["prune", "--db", source, "--list", "inbox", "--keep-last=-3", "--force"], 64),
            (["prune", "--db", source, "--list", "inbox", "--before", "-1"], 64),
            (["prune", "--db", source, "--list", "inbox", "--keep-last", "many"], 64),
            (["prune", "--db", source, "--list", "inbox", "--before", "9"], 65),
            (["prune", "--db", source, "--list", "nope", "--keep-last", "0"], 65),
            (["prune", "--db", missing, "--list", "inbox", "--keep-last", "0"], 66),
            (["prune", "--db", notes, "--list", "inbox", "--keep-last", "0"], 65),
            (["pull", "--db", missing, "--list", "inbox", "--replica", replica], 66),
            (["pull", "--db", notes, "--list", "inbox", "--replica", replica], 65),
            (["pull", "--db", f.dir.url.path, "--list", "inbox", "--replica", replica], 65),
            (["pull", "--db", source, "--list", "nope", "--replica", replica, "--as", "laptop"], 65),
            (["pull", "--db", source, "--list", "inbox", "--replica", notes], 65),
            (["pull", "--db", source, "--list", "inbox", "--replica", f.dir.url.path], 65),
            (["pull", "--db", source, "--list", "inbox", "--replica", source], 64),
            (["pull", "--db", source, "--list", "inbox", "--replica", replica, "--as", ""], 64),
            (["pull", "--db", source, "--list", "inbox", "--replica", replica, "--as", "tab\tbed"], 64),
            (["pull", "--db", source, "--list", "inbox"], 64),
            (["consumers", "--db", source, "--list", "inbox", "--register", "a", "--unregister", "phone"], 64),
            (["consumers", "--db", source, "--list", "inbox", "--at", "1"], 64),
            (["consumers", "--db", source, "--list", "inbox", "--register", "a", "--at", "-1"], 64),
            (["consumers", "--db", source, "--list", "inbox", "--register", "a", "--at", "9"], 65),
            (["consumers", "--db", source, "--list", "inbox", "--register", ""], 64),
            (["consumers", "--db", source, "--list", "inbox", "--unregister", "ghost"], 64),
            (["consumers", "--db", source, "--list", "nope"], 65),
            (["consumers", "--db", missing, "--list", "inbox"], 66),
        ]
        let snapshot = try CLIRunner.run(["show", "--db", source, "--list", "inbox", "--json"]).stdout
        let journal = try CLIRunner.run(["log", "--db", source, "--list", "inbox", "--json"]).stdout
        let consumers = try CLIRunner.run(["consumers", "--db", source, "--list", "inbox", "--json"]).stdout
        let files = try FileManager.default.contentsOfDirectory(atPath: f.dir.url.path).sorted()
        for (arguments, status) in cases {
            let result = try CLIRunner.run(arguments)
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(arguments): \(result.stdout)")
            #expect(result.stderr.hasPrefix("liststore: error: "), "\(arguments): \(result.stderr)")
            #expect(result.stderr.filter { $0 == "\n" }.count == 1, "\(arguments): \(result.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: f.dir.url.path).sorted() == files, "\(arguments)")
        }
        #expect(try CLIRunner.run(["show", "--db", source, "--list", "inbox", "--json"]).stdout == snapshot)
        #expect(try CLIRunner.run(["log", "--db", source, "--list", "inbox", "--json"]).stdout == journal)
        #expect(try CLIRunner.run(["consumers", "--db", source, "--list", "inbox", "--json"]).stdout == consumers)
        #expect(FileManager.default.contents(atPath: notes) == Data("not a database\n".utf8))
        #expect(!FileManager.default.fileExists(atPath: replica))
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test func pullFromRefusesCredentialsAndQueriesInTheURLWithoutShowingThem() throws {
        let f = try Fixture()
        let replica = f.path("replica.liststore")
        let cases: [[String]] = [
            ["--from", "http://alice:pa55word@127.0.0.1:1"],
            ["--from", "http://alice:pa55word@127.0.0.1:1/sync", "--token", "s3cret"],
            ["--from", "ftp://alice:pa55word@127.0.0.1:1"],
            ["--from", "http://127.0.0.1:1/sync?key=pa55word"],
            ["--from", "http://127.0.0.1:1/sync#pa55word"],
            ["--from", "http://127.0.0.1:1", "--max-answer-mib", "0"],
            ["--db", f.source, "--max-answer-mib", "4"],
        ]
        for extra in cases {
            let result = try CLIRunner.run(["pull", "--list", "inbox", "--replica", replica] + extra)
            #expect(result.status == 64, "\(extra): \(result.stderr)")
            #expect(result.stderr.hasPrefix("liststore: error: "), "\(extra): \(result.stderr)")
            #expect(result.stderr.filter { $0 == "\n" }.count == 1, "\(extra): \(result.stderr)")
            #expect(!result.stderr.contains("pa55word") && !result.stderr.contains("alice") && !result.stderr.contains("s3cret"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: replica))
        }
    }

    @Test func pullFromFailsOnAnAnswerLargerThanMaxAnswerMiB() throws {
        let f = try Fixture()
        // About 1.5 MiB of content in one commit.
        let elements = (0..<48).map { #"{"id":"e\#($0)","content":"\#(String(repeating: "x", count: 32 << 10))"}"# }
        let big = try f.dir.file("big.json", #"{"sections":[{"id":"s","elements":["# + elements.joined(separator: ",") + "]}]}")
        #expect(try CLIRunner.run(["commit", "--db", f.source, "--list", "inbox", "--file", big]).status == 0)
        let (server, url) = try ServeCommandTests.serve(f.source)
        defer {
            server.send(SIGTERM)
            _ = server.waitForExit(timeout: .seconds(20))
        }
        let replica = f.path("replica.liststore")
        let capped = try CLIRunner.run(["pull", "--from", url, "--list", "inbox", "--replica", replica, "--max-answer-mib", "1"])
        #expect(capped.status == 74, "\(capped.stderr)")
        #expect(capped.stderr.hasPrefix("liststore: error: ") && capped.stderr.filter { $0 == "\n" }.count == 1, "\(capped.stderr)")
        #expect(capped.stderr.contains("larger than the 1 MiB this client accepts"), "\(capped.stderr)")
        let roomy = try CLIRunner.run(["pull", "--from", url, "--list", "inbox", "--replica", replica, "--max-answer-mib", "2", "--json"])
        #expect(roomy.status == 0, "\(roomy.stderr)")
        #expect(try roomy.object()["version"] == 1)
        try f.expectReplicaEqualsSource(replica)
    }

    @Test func helpNamesTheCommandsAndTheirExitCodes() throws {
        let help = try CLIRunner.run(["help"])
        for command in ["pull", "prune", "consumers"] { #expect(help.stdout.contains(command)) }
        for command in ["pull", "prune", "consumers"] {
            let result = try CLIRunner.run([command, "--help"])
            #expect(result.status == 0)
            let text = result.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(text.contains("Exit codes: 0 ok; 1 failure; 64 usage; 65 invalid input data; 66 missing input file;"), "\(command)")
            #expect(text.contains("\"schemaVersion\":1"), "\(command)")
        }
    }
}

extension CLIRunner.Result {
    /// Standard output as one JSON object.
    func object() throws -> JSONObject {
        guard case .object(let object) = try JSONValue(parsing: stdout) else { throw NotAnObject(text: stdout) }
        return object
    }

    struct NotAnObject: Error { var text: String }
}
