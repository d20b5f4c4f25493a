import Foundation
import ListJSON
import ListStore
import ListDiffTestSupport
import Testing

/// The store commands run as a user runs them: the built binary, its stdout, stderr and exit code.
@Suite(.blockingWaits) struct StoreCommandTests {
    let v1 = #"{"sections":[{"id":"today","content":{"title":"Today"},"elements":[{"id":"m1","content":{"text":"hi"}},{"id":"m2"}]},{"id":"later","elements":[{"id":"m3","content":18446744073709551615}]}]}"#
    let v2 = #"{"sections":[{"id":"later","elements":[{"id":"m3","content":18446744073709551615},{"id":"m1","content":{"text":"hi!"}}]},{"id":"today","content":{"title":"Today"},"elements":[{"id":"m4","content":[1,2]}]}]}"#

    private func object(_ text: String) throws -> JSONObject {
        guard case .object(let object) = try JSONValue(parsing: text) else { throw CommandTestError.notAnObject(text) }
        return object
    }

    enum CommandTestError: Error { case notAnObject(String) }

    /// `drop` deletes a list and says what it was; a missing list is exit 65, a usage
    /// error 64, and the name starts afresh.
    @Test func dropDeletesAList() throws {
        let dir = try TemporaryDirectory()
        let db = dir.url.appendingPathComponent("s.liststore").path
        let file = try dir.file("v1.json", v1)
        for list in ["inbox", "keep"] { #expect(try CLIRunner.run(["commit", "--db", db, "--list", list, "--file", file]).status == 0) }
        #expect(try CLIRunner.run(["commit", "--db", db, "--list", "inbox", "--file", try dir.file("v2.json", v2)]).status == 0)
        let dropped = try CLIRunner.run(["drop", "--db", db, "--list", "inbox", "--json"])
        #expect(dropped.status == 0 && dropped.stderr.isEmpty)
        let answer = try object(dropped.stdout)
        #expect(answer["deleted"] == true && answer["list"] == "inbox" && answer["version"] == 2 && answer["schemaVersion"] == 1)
        let lists = try object(try CLIRunner.run(["lists", "--db", db, "--json"]).stdout)
        guard case .array(let names)? = lists["lists"] else { Issue.record("no lists"); return }
        #expect(names.count == 1)
        let missing = try CLIRunner.run(["drop", "--db", db, "--list", "inbox"])
        #expect(missing.status == 65 && missing.stderr.contains("inbox") && missing.stdout.isEmpty)
        #expect(try CLIRunner.run(["drop", "--db", db]).status == 64)
        let human = try CLIRunner.run(["drop", "--db", db, "--list", "keep"])
        #expect(human.status == 0 && human.stdout == "'keep': deleted (it was at version 1).\n")
        let again = try object(try CLIRunner.run(["commit", "--db", db, "--list", "inbox", "--file", file, "--json"]).stdout)
        #expect(again["version"] == 1 && again["parentVersion"] == 0)
    }

    @Test func commitShowLogListsDiffAndVerifyWorkTogether() throws {
        let dir = try TemporaryDirectory()
        let db = dir.url.appendingPathComponent("s.liststore").path
        let first = try CLIRunner.run(["commit", "--db", db, "--list", "inbox", "--file", try dir.file("v1.json", v1), "--json"])
        #expect(first.status == 0 && first.stderr.isEmpty)
        let committed = try object(first.stdout)
        #expect(committed["version"] == 1 && committed["parentVersion"] == 0 && committed["changed"] == true)
        #expect(committed["schemaVersion"] == 1 && committed["list"] == "inbox")

        // show --json feeds back into commit unchanged.
        let shown = try CLIRunner.run(["show", "--db", db, "--list", "inbox", "--json"])
        #expect(shown.status == 0)
        #expect(shown.stdout.contains("18446744073709551615"))
        let again = try CLIRunner.run(["commit", "--db", db, "--list", "inbox", "--file", "-", "--json"], input: Data(shown.stdout.utf8))
        #expect(try object(again.stdout)["changed"] == false)

        let second = try CLIRunner.run([
            "commit", "--db", db, "--list", "inbox", "--file", try dir.file("v2.json", v2), "--author", "ana", "--message", "tidy",
        ])
        #expect(second.status == 0)
        #expect(second.stdout.hasPrefix("'inbox': version 2 (parent 1)"))
        #expect(second.stdout.contains("move element"))

        // The journal replays to both versions.
        let log = try object(try CLIRunner.run(["log", "--db", db, "--list", "inbox", "--json"]).stdout)
        #expect(log["hasMore"] == false)
        guard case .array(let commits)? = log["commits"] else { Issue.record("no commits"); return }
        #expect(commits.count == 2)
        var state: [JSONSection] = []
        for (k, commit) in commits.enumerated() {
            guard case .object(let entry) = commit else { continue }
            #expect(entry["version"] == JSONValue(k + 1))
            state = try StageDocument.decodeStages(try #require(entry["stages"]), applyingTo: state).result
        }
        #expect(state == (try SnapshotDocument(decoding: JSONValue(parsing: v2)).sections))
        guard case .object(let secondEntry) = commits[1] else { return }
        #expect(secondEntry["author"] == "ana" && secondEntry["message"] == "tidy")
        let limited = try object(try CLIRunner.run(["log", "--db", db, "--list", "inbox", "--limit", "1", "--json"]).stdout)
        #expect(limited["hasMore"] == true)

        let table = try CLIRunner.run(["log", "--db", db, "--list", "inbox"])
        #expect(table.stdout.hasPrefix("version  parent  committed at"))

        let lists = try object(try CLIRunner.run(["lists", "--db", db, "--json"]).stdout)
        guard case .array(let entries)? = lists["lists"], case .object(let inbox)? = entries.first else {
            Issue.record("no lists"); return
        }
        #expect(inbox["name"] == "inbox" && inbox["version"] == 2 && inbox["elements"] == 3 && inbox["sections"] == 2)

        let diff = try object(try CLIRunner.run(["diff", "--db", db, "--list", "inbox", "--from-version", "0", "--json"]).stdout)
        #expect(diff["fromVersion"] == 0 && diff["toVersion"] == 2)
        let replayed = try StageDocument.decodeStages(try #require(diff["stages"]), applyingTo: []).result
        #expect(replayed == (try SnapshotDocument(decoding: JSONValue(parsing: v2)).sections))

        let old = try object(try CLIRunner.run(["show", "--db", db, "--list", "inbox", "--at", "1", "--json"]).stdout)
        #expect(old["version"] == 1)
        #expect(try SnapshotDocument(decoding: .object(old)).sections == SnapshotDocument(decoding: JSONValue(parsing: v1)).sections)

        let verify = try CLIRunner.run(["verify", "--db", db])
        #expect(verify.status == 0)
        #expect(verify.stdout.contains("The store is consistent."))
    }

    @Test func losingWriterGetsAVersionConflict() throws {
        let dir = try TemporaryDirectory()
        let db = dir.url.appendingPathComponent("s.liststore").path
        let file = try dir.file("v1.json", v1)
        #expect(try CLIRunner.run(["commit", "--db", db, "--list", "l", "--file", file, "--expect-version", "0"]).status == 0)
        let lost = try CLIRunner.run(["commit", "--db", db, "--list", "l", "--file", try dir.file("v2.json", v2), "--expect-version", "0"])
        #expect(lost.status == 75)
        #expect(lost.stdout.isEmpty)
        #expect(lost.stderr == "liststore: error: version conflict on list 'l': expected version 0, the head is 1\n")
    }

    @Test func badInputGetsOneLineAndChangesNothing() throws {
        let dir = try TemporaryDirectory()
        let db = dir.url.appendingPathComponent("s.liststore").path
        #expect(try CLIRunner.run(["commit", "--db", db, "--list", "l", "--file", try dir.file("v1.json", v1)]).status == 0)
        let notes = try dir.file("notes.txt", "not a database\n")
        var deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        deep = #"{"sections":[{"id":"s","content":"# + deep + "}]}"
        let cases: [([String], Int32)] = [
            (["commit", "--db", db, "--list", "l", "--file", try dir.file("bad.json", "{\"sections\":[")], 65),
            (["commit", "--db", db, "--list", "l", "--file", try dir.file("latin1.json", [0x7B, 0x22, 0xE9, 0x22, 0x3A, 0x31, 0x7D])], 65),
            (["commit", "--db", db, "--list", "l", "--file", try dir.file("types.json", #"{"sections":[{"id":7}]}"#)], 65),
            (["commit", "--db", db, "--list", "l", "--file", try dir.file("noid.json", #"{"sections":[{"elements":[]}]}"#)], 65),
            (["commit", "--db", db, "--list", "l", "--file", try dir.file("deep.json", deep)], 65),
            (["commit", "--db", db, "--list", "l", "--file", dir.url.appendingPathComponent("missing.json").path], 66),
            (["commit", "--db", db, "--list", "l", "--file", dir.url.path], 66),
            (["commit", "--db", notes, "--list", "l", "--file", try dir.file("ok.json", v2)], 65),
            (["commit", "--db", dir.url.path, "--list", "l", "--file", try dir.file("ok2.json", v2)], 65),
            (["commit", "--db", db, "--list", "", "--file", try dir.file("ok3.json", v2)], 64),
            (["commit", "--db", db, "--list", "l", "--file", try dir.file("ok4.json", v2), "--expect-version", "-1"], 64),
            (["show", "--db", db, "--list", "l", "--at", "7"], 65),
            (["show", "--db", db, "--list", "nope"], 65),
            (["show", "--db", dir.url.appendingPathComponent("nothing.liststore").path, "--list", "l"], 66),
            (["log", "--db", db, "--list", "l", "--since", "9"], 65),
            (["log", "--db", db, "--list", "l", "--limit", "0"], 64),
            (["diff", "--db", db, "--list", "l", "--from-version", "5"], 65),
            (["diff", "--db", db, "--from-version", "0"], 64),
            (["lists", "--db", notes], 65),
            (["verify", "--db", notes], 65),
        ]
        let before = try CLIRunner.run(["show", "--db", db, "--list", "l", "--json"]).stdout
        let journal = try CLIRunner.run(["log", "--db", db, "--list", "l", "--json"]).stdout
        for (arguments, status) in cases {
            let result = try CLIRunner.run(arguments)
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(arguments)")
            #expect(result.stderr.hasPrefix("liststore: error: "), "\(arguments): \(result.stderr)")
            #expect(result.stderr.filter { $0 == "\n" }.count == 1, "\(arguments): \(result.stderr)")
        }
        #expect(try CLIRunner.run(["show", "--db", db, "--list", "l", "--json"]).stdout == before)
        #expect(try CLIRunner.run(["log", "--db", db, "--list", "l", "--json"]).stdout == journal)
        #expect(FileManager.default.contents(atPath: notes) == Data("not a database\n".utf8))
        #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("nothing.liststore").path))
    }

    @Test func damagedStoreFailsVerificationWithoutCrashing() throws {
        let dir = try TemporaryDirectory()
        let db = dir.url.appendingPathComponent("s.liststore").path
        let store = try Store(path: db)
        var sections: [ListSection] = []
        for version in 0..<30 {
            sections = [ListSection(model: ListItem(id: "s", json: .null), elements: (0..<(200 + version)).map {
                ListItem(id: "e\($0)", json: JSONValue($0 * version))
            })]
            try store.commit(sections, to: "l")
        }
        var bytes = try #require(FileManager.default.contents(atPath: db))
        for k in 4096 * 3..<4096 * 3 + 3000 { bytes[k] = UInt8(truncatingIfNeeded: k &* 31) }
        let damaged = dir.url.appendingPathComponent("damaged.liststore").path
        try bytes.write(to: URL(fileURLWithPath: damaged))
        let result = try CLIRunner.run(["verify", "--db", damaged])
        #expect([74, 65].contains(result.status), "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.hasPrefix("liststore: error: "))
        #expect(result.stderr.filter { $0 == "\n" }.count == 1)
    }

    @Test func demoReplaysEveryVersionWithMatchingDigests() throws {
        let dir = try TemporaryDirectory()
        let folder = dir.url.appendingPathComponent("demo").path
        let result = try CLIRunner.run(["demo", "--directory", folder])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Every digest matches, and both stores verify."))
        #expect(result.stdout.contains("move section"))
        #expect(result.stdout.contains("delete section"))
        #expect(result.stdout.contains("update element"))
        // The replayed replica equals the server's list before the offline part (version 5).
        let source = try Store(path: folder + "/inbox.liststore").snapshot(of: "inbox")
        let replica = try Store(path: folder + "/replica.liststore").snapshot(of: "inbox")
        #expect(try Store(path: folder + "/inbox.liststore").snapshot(of: "inbox", at: 5) == replica)
        // The offline part: the laptop's edits and the server's merge, with the clashes reported.
        #expect(result.stdout.contains("local change 3, pending"))
        #expect(result.stdout.contains("conflict: m3 key \"subject\": both changed it"))
        #expect(result.stdout.contains("conflict: m5 was deleted on the server"))
        #expect(result.stdout.contains("The laptop equals the server"))
        let laptop = try Store(path: folder + "/laptop.liststore")
        #expect(try laptop.snapshot(of: "inbox").digest == source.digest)
        #expect(try laptop.outbox(of: "inbox").isEmpty)
        // A second run in the same directory refuses to overwrite.
        let again = try CLIRunner.run(["demo", "--directory", folder])
        #expect(again.status == 64)
    }
}
