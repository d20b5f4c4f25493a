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

/// Offline writes from the command line (Docs/CommandLine.md): `commit` to a replica, `push`, `sync` and
/// `status`, as a user runs them, against a source store and a child `liststore serve`.
@Suite(.blockingWaits) struct OfflineCommandTests {
    /// A directory with a source store whose list `inbox` holds one section `s` with `a`, `b`, `c`
    /// (contents `{"t":"a"}`, …).
    struct Fixture {
        let dir: TemporaryDirectory
        let source: String

        init() throws {
            dir = try TemporaryDirectory()
            source = dir.url.appendingPathComponent("source.liststore").path
            let file = try dir.file("commit-first.json", document(["a", "b", "c"]))
            _ = try CLIRunner.run(["commit", "--db", source, "--list", "inbox", "--file", file])
        }

        func path(_ name: String) -> String { dir.url.appendingPathComponent(name).path }

        /// A snapshot document of section `s` with `elements`; an element `id=text` has content
        /// `{"t":"text"}`, an element `id` has `{"t":"id"}`.
        func document(_ elements: [String]) -> String {
            let items = elements.map { element in
                let parts = element.split(separator: "=", maxSplits: 1).map(String.init)
                return #"{"id":"\#(parts[0])","content":{"t":"\#(parts.last!)"}}"#
            }
            return #"{"sections":[{"id":"s","elements":["# + items.joined(separator: ",") + "]}]}"
        }

        /// `liststore commit --db store --list inbox` of `elements`, with `extra` options.
        @discardableResult
        func commit(_ store: String, _ elements: [String], _ extra: [String] = []) async throws -> CLIRunner.Result {
            let file = try dir.file("commit-\(UUID().uuidString).json", document(elements))
            let result = try await CLIRunner.runOffPool(["commit", "--db", store, "--list", "inbox", "--file", file] + extra)
            #expect(result.status == 0, "\(result.stderr)")
            return result
        }

        /// `liststore command … --list inbox --replica replica --json`, decoded; `source` is
        /// `["--db", path]` or `["--from", url]`.
        func run(_ command: String, _ source: [String], _ replica: String) async throws -> JSONObject {
            let result = try await CLIRunner.runOffPool([command] + source + ["--list", "inbox", "--replica", replica, "--json"])
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(result.stderr.isEmpty, "\(command): \(result.stderr)")
            return try result.object()
        }

        /// `status --db replica --json`: the status of `inbox`.
        func status(_ replica: String) async throws -> JSONObject {
            let result = try await CLIRunner.runOffPool(["status", "--db", replica, "--list", "inbox", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            guard case .array(let replicas)? = try result.object()["replicas"], case .object(let status)? = replicas.first else {
                throw CLIRunner.Result.NotAnObject(text: result.stdout)
            }
            return status
        }

        /// `inbox`'s elements in `store` as `id=text`.
        func elements(_ store: String) async throws -> [String] {
            let snapshot = try await CLIRunner.runOffPool(["show", "--db", store, "--list", "inbox", "--json"]).object()
            guard case .array(let sections)? = snapshot["sections"], case .object(let section)? = sections.first,
                case .array(let elements)? = section["elements"]
            else { return [] }
            return elements.compactMap { element in
                guard case .object(let element) = element, case .string(let id)? = element["id"],
                    case .string(let text)? = element["content"]?["t"]
                else { return nil }
                return "\(id)=\(text)"
            }
        }

        /// Expects `replica` to hold the source's head, digest for digest, and to verify.
        func expectEqualToSource(_ replica: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let source = try await CLIRunner.runOffPool(["show", "--db", self.source, "--list", "inbox", "--json"]).object()
            let copy = try await CLIRunner.runOffPool(["show", "--db", replica, "--list", "inbox", "--json"]).object()
            #expect(source["digest"] == copy["digest"] && source["sections"] == copy["sections"], sourceLocation: sourceLocation)
            #expect(try await CLIRunner.runOffPool(["verify", "--db", replica]).status == 0, sourceLocation: sourceLocation)
        }
    }

    @Test func commitsToAReplicaArePendingUntilPushedAndConfirmedByAPull() async throws {
        let f = try Fixture()
        let replica = f.path("replica.liststore")
        let db = ["--db", f.source]
        #expect(try await f.run("pull", db, replica)["version"] == 1)

        // A commit to the replica is a local change: pending, said in both outputs.
        let json = try await f.commit(replica, ["a", "x", "b", "c"], ["--json"]).object()
        #expect(json["pending"] == 1 && json["version"] == 2 && json["changed"] == true)
        let human = try await f.commit(replica, ["a=A", "x", "b", "c"], ["--author", "ana"])
        #expect(human.stdout.contains(
            "\npending: local change 2 of list 'inbox', not pushed yet; 'liststore push' or 'sync' sends it\n"), "\(human.stdout)")
        // Commits to a list that is no replica are not.
        #expect(try await f.commit(f.source, ["a", "b", "c", "d"], ["--json"]).object()["pending"] == nil)
        #expect(!(try await f.commit(f.source, ["a", "b", "c", "d", "e"]).stdout.contains("pending")))

        var status = try await f.status(replica)
        #expect(status.keys == [
            "client", "confirmedDigest", "confirmedVersion", "headVersion", "lastConflicts", "list", "pending", "pushed", "source",
        ])
        #expect(status["pending"] == 2 && status["pushed"] == 0 && status["confirmedVersion"] == 1 && status["headVersion"] == 3)
        #expect(status["source"]?["list"] == "inbox" && status["source"]?["epoch"] == 1 && status["lastConflicts"] == [])
        let table = try await CLIRunner.runOffPool(["status", "--db", replica])
        #expect(table.status == 0 && table.stderr.isEmpty)
        let rows = table.stdout.split(separator: "\n")
        #expect(rows.count == 2 && rows[0].hasPrefix("list   source list  source store"), "\(table.stdout)")
        #expect(rows[1].split(separator: " ").suffix(5) == ["1", "3", "2", "0", "0"], "\(table.stdout)")

        // push sends both; the source merges them onto its own commits.
        let pushed = try await CLIRunner.runOffPool(["push", "--db", f.source, "--list", "inbox", "--replica", replica])
        #expect(pushed.status == 0 && pushed.stderr.isEmpty)
        #expect(pushed.stdout == "\(replica): inbox: 2 local changes pushed (source version 5)\n")
        #expect(try await f.elements(f.source) == ["a=A", "x=x", "b=b", "c=c", "d=d", "e=e"])
        status = try await f.status(replica)
        #expect(status["pending"] == 0 && status["pushed"] == 2)
        let nothing = try await f.run("push", db, replica)
        #expect(nothing == ["schemaVersion": 1, "list": "inbox", "pushed": 0, "duplicates": 0, "version": .null, "conflicts": [], "newClientIDs": 0])
        #expect(try await CLIRunner.runOffPool(["push", "--db", f.source, "--list", "inbox", "--replica", replica]).stdout
            == "\(replica): inbox: nothing to push\n")

        // The pull confirms them.
        let pull = try await CLIRunner.runOffPool(["pull", "--db", f.source, "--list", "inbox", "--replica", replica])
        #expect(pull.stdout == "\(replica): inbox at source version 5 (4 commits applied), 2 local changes confirmed\n", "\(pull.stdout)")
        status = try await f.status(replica)
        #expect(status["pending"] == 0 && status["pushed"] == 0 && status["confirmedVersion"] == 5)
        try await f.expectEqualToSource(replica)

        // A pull with changes still pending rebases them on top, and says so.
        try await f.commit(replica, ["a=A", "x", "b", "c", "d", "e", "y"])
        try await f.commit(f.source, ["a=A", "x", "c", "d", "e"])
        let rebased = try await f.run("pull", db, replica)
        #expect(rebased["pending"] == 1 && rebased["confirmedChanges"] == 0 && rebased["version"] == 6)
        #expect(try await f.elements(replica) == ["a=A", "x=x", "c=c", "d=d", "e=e", "y=y"])
        let line = try await CLIRunner.runOffPool(["pull", "--db", f.source, "--list", "inbox", "--replica", replica])
        #expect(line.stdout == "\(replica): inbox at source version 6 (up to date), 1 local change rebased on top\n")

        // sync: push, then pull; both halves in one document.
        let synced = try await f.run("sync", db, replica)
        #expect(synced.keys == ["pull", "push", "schemaVersion"])
        #expect(synced["push"]?["pushed"] == 1 && synced["push"]?["version"] == 7 && synced["push"]?["conflicts"] == [])
        #expect(synced["pull"]?["version"] == 7 && synced["pull"]?["pending"] == 0 && synced["pull"]?["confirmedChanges"] == 1)
        try await f.expectEqualToSource(replica)
        let again = try await CLIRunner.runOffPool(["sync", "--db", f.source, "--list", "inbox", "--replica", replica])
        #expect(again.stdout == "\(replica): inbox: nothing to push\n\(replica): inbox at source version 7 (up to date)\n")

        // Pruning the source folds its record of the replica's three pushes, but the latest, into one row.
        let pruned = try await CLIRunner.runOffPool(["prune", "--db", f.source, "--list", "inbox", "--keep-last", "0"])
        #expect(pruned.stdout == """
            'inbox': 7 journal entries removed; the history now starts at version 7 (was 0; head 7).
            1 row of the record of pushes folded away.

            """, "\(pruned.stdout)")
        try await f.expectEqualToSource(replica)
    }

    /// The walk-through of Docs/CommandLine.md ("Offline writes from the command line"): two replicas pull from `liststore serve`, each commits offline,
    /// both sync, and the clash is reported to the one whose change came second.
    @Test func twoReplicasEditedOfflineConvergeThroughAServerWithTheConflictReported() async throws {
        let f = try Fixture()
        let (server, url) = try ServeCommandTests.serve(f.source, ["--token", "s3cret"])
        defer {
            server.send(SIGTERM)
            _ = server.waitForExit(timeout: .seconds(20))
        }
        let from = ["--from", url, "--token", "s3cret"]
        let phone = f.path("phone.liststore")
        let laptop = f.path("laptop.liststore")
        for replica in [phone, laptop] { #expect(try await f.run("pull", from, replica)["version"] == 1) }

        // Offline: the phone edits a and adds x at the end; the laptop edits a too and drops b.
        try await f.commit(phone, ["a=phone", "b", "c", "x"])
        try await f.commit(laptop, ["a=laptop", "c"])

        let first = try await f.run("sync", from, phone)
        #expect(first["push"]?["pushed"] == 1 && first["push"]?["conflicts"] == [] && first["pull"]?["pending"] == 0)
        let second = try await CLIRunner.runOffPool(["sync"] + from + ["--list", "inbox", "--replica", laptop])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout == """
            \(laptop): inbox: 1 local change pushed (source version 3), 1 conflict
              contentConflict  "a" in section "s", key "t": mine "laptop", theirs "phone"
            \(laptop): inbox at source version 3 (2 commits applied), 1 local change confirmed

            """, "\(second.stdout)")
        let last = try await f.run("sync", from, phone)
        #expect(last["push"]?["pushed"] == 0 && last["pull"]?["version"] == 3)

        // Everyone agrees: the laptop's a (mine wins the clash), the phone's x, no b.
        #expect(try await f.elements(f.source) == ["a=laptop", "c=c", "x=x"])
        try await f.expectEqualToSource(phone)
        try await f.expectEqualToSource(laptop)

        // status tells the laptop what happened.
        let status = try await f.status(laptop)
        #expect(status["lastConflicts"] == [["kind": "contentConflict", "id": "a", "section": "s", "key": "t", "mine": "laptop", "theirs": "phone"]])
        let table = try await CLIRunner.runOffPool(["status", "--db", laptop])
        #expect(table.stdout.hasSuffix("""

            'inbox': the last push was answered with 1 conflict:
              contentConflict  "a" in section "s", key "t": mine "laptop", theirs "phone"

            """), "\(table.stdout)")
        // The source's journal carries the push and its conflicts.
        let log = try await CLIRunner.runOffPool(["log", "--db", f.source, "--list", "inbox", "--since", "2", "--json"]).object()
        guard case .array(let commits)? = log["commits"], case .object(let commit)? = commits.first else {
            Issue.record("no commit: \(log)"); return
        }
        #expect(commit["push"]?["seq"] == 1 && commit["conflicts"]?.arrayValue?.count == 1)
    }

    /// A push that the source merged but whose answer never came back: the next pull learns it from
    /// the source's record, confirms the change and reports its conflict.
    @Test func aPullReportsTheConflictsOfAPushWhoseAnswerWasLost() async throws {
        let f = try Fixture()
        let replica = f.path("replica.liststore")
        #expect(try await f.run("pull", ["--db", f.source], replica)["version"] == 1)
        try await f.commit(replica, ["a=mine", "b", "c"])
        try await f.commit(f.source, ["a=theirs", "b", "c"])
        // The push reaches the source; its answer is lost on the way back.
        let store = try Store(path: replica)
        let entry = try #require(try await store.outbox(of: "inbox").first)
        let client = try await store.clientID()
        let push = Push(id: PushID(client: client, seq: entry.seq), intents: entry.intents)
        #expect(try await Store(path: f.source).merge(push, into: "inbox").conflicts.count == 1)
        #expect(try await f.status(replica)["pending"] == 1)

        let pulled = try await CLIRunner.runOffPool(["pull", "--db", f.source, "--list", "inbox", "--replica", replica])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(pulled.stdout == """
            \(replica): inbox at source version 3 (2 commits applied), 1 local change confirmed, 1 conflict of pushes whose answer was lost
              contentConflict  "a" in section "s", key "t": mine "mine", theirs "theirs"

            """, "\(pulled.stdout)")
        #expect(try await f.status(replica)["pending"] == 0)
        try await f.expectEqualToSource(replica)
    }

    @Test func syncFollowPushesLocalCommitsAsTheyLandAndStopsOnSIGINT() async throws {
        let f = try Fixture()
        let (server, url) = try ServeCommandTests.serve(f.source)
        defer {
            server.send(SIGTERM)
            _ = server.waitForExit(timeout: .seconds(20))
        }
        let replica = f.path("replica.liststore")
        let follower = try StreamingProcess(["sync", "--from", url, "--list", "inbox", "--replica", replica, "--follow", "--json"])
        #expect(follower.waitForLine(timeout: .seconds(30)) { $0.contains("\"version\":1") } != nil, "\(follower.errorOutput)")
        // A commit to the replica (another process) is pushed within a second or so.
        try await f.commit(replica, ["a", "b", "c", "r"])
        let pushed = follower.waitForLine(timeout: .seconds(30)) { $0.contains("\"pushed\":1") }
        #expect(pushed?.contains("\"pull\":{") == true && pushed?.contains("\"schemaVersion\":1") == true, "\(follower.output)")
        #expect(try await f.elements(f.source) == ["a=a", "b=b", "c=c", "r=r"])
        // A commit to the source is pulled.
        try await f.commit(f.source, ["s", "a", "b", "c", "r"])
        #expect(follower.waitForLine(timeout: .seconds(30)) { $0.contains("\"version\":3") } != nil, "\(follower.output)")
        follower.send(SIGINT)
        #expect(follower.waitForExit(timeout: .seconds(20)))
        #expect(follower.process.terminationStatus == 0, "\(follower.errorOutput)")
        try await f.expectEqualToSource(replica)
        #expect(try await f.status(replica)["pending"] == 0)
    }

    /// `drop` of a replica list with local changes its source does not hold yet refuses (exit 65,
    /// naming how many) and changes nothing, unless `--discard-pending`.
    @Test func dropRefusesAReplicaListWithPendingChangesUnlessTold() async throws {
        let f = try Fixture()
        let replica = f.path("replica.liststore")
        _ = try await f.run("pull", ["--db", f.source], replica)
        try await f.commit(replica, ["a", "x", "b", "c"])
        let refused = try await CLIRunner.runOffPool(["drop", "--db", replica, "--list", "inbox"])
        #expect(refused.status == 65 && refused.stdout.isEmpty, "\(refused.stderr)")
        #expect(refused.stderr.contains("1 local change") && refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(try await f.status(replica)["pending"] == 1)
        let dropped = try await CLIRunner.runOffPool(["drop", "--db", replica, "--list", "inbox", "--discard-pending", "--json"])
        #expect(dropped.status == 0, "\(dropped.stderr)")
        #expect(try dropped.object()["deleted"] == true)
        // A list without pending changes goes without being told.
        let plain = try await CLIRunner.runOffPool(["drop", "--db", f.source, "--list", "inbox"])
        #expect(plain.status == 0, "\(plain.stderr)")
    }

    @Test func badInputExitsWithTheDocumentedCodeAndChangesNothing() async throws {
        let f = try Fixture()
        let replica = f.path("replica.liststore")
        #expect(try await f.run("pull", ["--db", f.source], replica)["version"] == 1)
        try await f.commit(replica, ["a", "b", "c", "x"])
        let plain = f.path("plain.liststore")
        try await f.commit(plain, ["a"])
        let notes = try f.dir.file("notes.txt", "not a database\n")
        let missing = f.path("missing.liststore")
        let source = f.source

        let cases: [([String], Int32)] = [
            (["push", "--db", source, "--list", "inbox"], 64),
            (["push", "--db", source, "--from", "http://127.0.0.1:1", "--list", "inbox", "--replica", replica], 64),
            (["push", "--db", source, "--token", "t", "--list", "inbox", "--replica", replica], 64),
            (["push", "--from", "ftp://x", "--list", "inbox", "--replica", replica], 64),
            (["push", "--db", source, "--list", "inbox", "--replica", source], 64),
            (["push", "--db", missing, "--list", "inbox", "--replica", replica], 66),
            (["push", "--db", source, "--list", "inbox", "--replica", missing], 66),
            (["push", "--db", notes, "--list", "inbox", "--replica", replica], 65),
            (["push", "--db", source, "--list", "inbox", "--replica", notes], 65),
            (["push", "--db", source, "--list", "nope", "--replica", replica], 65),
            (["push", "--db", source, "--list", "inbox", "--replica", plain], 65),
            (["push", "--db", plain, "--list", "inbox", "--replica", replica], 65),
            (["push", "--from", "http://127.0.0.1:1", "--list", "inbox", "--replica", replica], 74),
            (["sync", "--db", source, "--list", "inbox", "--replica", replica, "--follow", "--token", "t"], 64),
            (["sync", "--db", source, "--list", "inbox", "--replica", source], 64),
            (["sync", "--db", missing, "--list", "inbox", "--replica", replica], 66),
            (["sync", "--db", source, "--list", "nope", "--replica", replica], 65),
            (["sync", "--db", plain, "--list", "inbox", "--replica", replica], 65),
            (["status", "--db", missing], 66),
            (["status", "--db", notes], 65),
            (["status", "--db", replica, "--list", "nope"], 65),
            (["status", "--db", plain, "--list", "inbox"], 65),
            (["status", "--list", "inbox"], 64),
        ]
        let stores = [source, replica, plain]
        let before = try stores.map { try CLIRunner.run(["log", "--db", $0, "--list", "inbox", "--json"]).stdout }
        let status = try await f.status(replica)
        let files = try FileManager.default.contentsOfDirectory(atPath: f.dir.url.path).sorted()
        for (arguments, code) in cases {
            let result = try await CLIRunner.runOffPool(arguments)
            #expect(result.status == code, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(arguments): \(result.stdout)")
            #expect(result.stderr.hasPrefix("liststore: error: "), "\(arguments): \(result.stderr)")
            #expect(result.stderr.filter { $0 == "\n" }.count == 1, "\(arguments): \(result.stderr)")
            let now = try FileManager.default.contentsOfDirectory(atPath: f.dir.url.path).sorted()
            #expect(now == files, "\(arguments): \(now) \(files)")
        }
        let refused = try await CLIRunner.runOffPool(["push", "--db", plain, "--list", "inbox", "--replica", replica])
        #expect(refused.stderr.contains("a replica pushes only to its own source"), "\(refused.stderr)")
        #expect(try stores.map { try CLIRunner.run(["log", "--db", $0, "--list", "inbox", "--json"]).stdout } == before)
        #expect(try await f.status(replica) == status)
        #expect(FileManager.default.contents(atPath: notes) == Data("not a database\n".utf8))

        // A store without replica lists says so.
        let none = try await CLIRunner.runOffPool(["status", "--db", plain])
        #expect(none.status == 0 && none.stdout == "No replica lists in '\(plain)'.\n")
        #expect(try await CLIRunner.runOffPool(["status", "--db", plain, "--json"]).object() == ["schemaVersion": 1, "replicas": []])
    }

    @Test func helpDocumentsTheOutputsAndExitCodes() async throws {
        let help = try await CLIRunner.runOffPool(["help"])
        for command in ["push", "sync", "status"] { #expect(help.stdout.contains(command)) }
        for command in ["push", "sync", "status"] {
            let result = try await CLIRunner.runOffPool([command, "--help"])
            #expect(result.status == 0)
            let text = result.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(text.contains("Exit codes: 0 ok; 1 failure; 64 usage; 65 invalid input data; 66 missing input file;"), "\(command)")
            #expect(text.contains("\"schemaVersion\":1"), "\(command)")
        }
        let commit = try await CLIRunner.runOffPool(["commit", "--help"]).stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(commit.contains("\"pending\""))
    }
}
