import Crypto
import Foundation
import ListDiffTestSupport
import ListJSON
import ListStore
import ListStoreTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `liststore pull|push|sync|status --lists P`: replica sets from the command line, and sets
/// syncing through a real `liststore serve` while lists are written, created and deleted at the
/// source, the clients write offline, `sync` is killed with SIGKILL at random instants and the
/// server is restarted or killed.
@Suite(.blockingWaits) struct ReplicaSetProcessTests {
    static let rounds = ProcessInfo.processInfo.environment["LISTSTORE_SET_CONVERGENCE_ROUNDS"].flatMap(Int.init) ?? 60

    @Test func setsFromTheCommandLine() throws {
        let dir = try TemporaryDirectory()
        let source = dir.url.appendingPathComponent("source.liststore").path
        let replica = dir.url.appendingPathComponent("phone.liststore").path
        let file = try dir.file("s.json", #"{"sections":[{"id":"s","elements":[{"id":"a"},{"id":"b"}]}]}"#)
        for list in ["users/ana/inbox", "users/ana/work", "users/bob/inbox"] {
            #expect(try CLIRunner.run(["commit", "--db", source, "--list", list, "--file", file]).status == 0)
        }
        let pulled = try CLIRunner.run(["pull", "--db", source, "--lists", "users/ana/**", "--replica", replica, "--json"])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        let document = try pulled.object()
        #expect(document["created"] == ["users/ana/inbox", "users/ana/work"] && document["applied"] == 2)

        // An offline change to a list the source then deletes: reported, with its content.
        let mine = try dir.file("m.json", #"{"sections":[{"id":"s","elements":[{"id":"a"},{"id":"offline","content":"mine"}]}]}"#)
        #expect(try CLIRunner.run(["commit", "--db", replica, "--list", "users/ana/work", "--file", mine]).status == 0)
        #expect(try CLIRunner.run(["drop", "--db", source, "--list", "users/ana/work"]).status == 0)
        let synced = try CLIRunner.run(["sync", "--db", source, "--lists", "users/ana/**", "--replica", replica, "--json"])
        #expect(synced.status == 0, "\(synced.stderr)")
        let sync = try synced.object()
        #expect(sync["pull"]?["deleted"] == ["users/ana/work"])
        #expect(sync["pull"]?["conflicts"]?["users/ana/work"]?.arrayValue?.first?["kind"] == "listDeleted")
        let ids = sync["pull"]?["conflicts"]?["users/ana/work"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        #expect(ids.contains("offline"), "\(ids)")
        let status = try CLIRunner.run(["status", "--db", replica, "--lists", "users/ana/**", "--json"]).object()
        #expect(status["lastConflicts"]?["users/ana/work"]?.arrayValue?.first?["kind"] == "listDeleted")
        #expect(status["replicas"]?.arrayValue?.count == 1)
        let people = try CLIRunner.run(["status", "--db", replica, "--lists", "users/ana/**"])
        #expect(people.stdout.contains("'users/ana/work' was deleted at the source; 2 changes"), "\(people.stdout)")

        // Usage errors: 64, nothing written.
        for arguments in [
            ["pull", "--db", source, "--lists", "users/**", "--list", "x", "--replica", replica],
            ["pull", "--db", source, "--replica", replica],
            ["sync", "--db", source, "--lists", "users/{sub}/**", "--replica", replica],
            ["pull", "--db", source, "--lists", "users/**", "--catch-up", "--replica", replica],
            ["status", "--db", replica, "--lists", "users/**", "--list", "x"],
        ] {
            let refused = try CLIRunner.run(arguments)
            #expect(refused.status == 64, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count <= 2, "\(refused.stderr)")
        }
    }

    /// The access file of the users' test: an HS256 key, each user's own lists, the team lists of
    /// their teams, and the admin grant on the teams they administer.
    static let secret = Array("a secret of the replica sets' process test".utf8)

    static func accessFile() -> String {
        let key = Data(secret).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return #"{"keys": {"keys": [{"kty": "oct", "kid": "k1", "alg": "HS256", "k": "\#(key)"}]}, "rules": ["#
            + #"{"lists": "users/{sub}/**", "grant": "write"}, {"lists": "teams/{teams}/**", "grant": "write"}, "#
            + #"{"lists": "teams/{admin_of}/**", "grant": "admin"}]}"#
    }

    /// An HS256 token of `sub`, in `teams`, administering `adminOf`, valid for an hour.
    static func token(_ sub: String, teams: [String], adminOf: [String] = []) -> String {
        func encode(_ bytes: some Sequence<UInt8>) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let list = { (names: [String]) in "[" + names.map { "\"\($0)\"" }.joined(separator: ",") + "]" }
        let claims = #"{"admin_of":\#(list(adminOf)),"exp":\#(Int(Date().timeIntervalSince1970) + 3600),"sub":"\#(sub)","teams":\#(list(teams))}"#
        let input = encode(Array(#"{"alg":"HS256","kid":"k1","typ":"JWT"}"#.utf8)) + "." + encode(Array(claims.utf8))
        let signature = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: SymmetricKey(data: secret))
        return input + "." + encode(signature)
    }

    /// Three users, each syncing a replica set of every list their token may read (their own lists
    /// and the shared team lists), write offline while lists are written, created and deleted (at
    /// the source, by the team's admin over HTTP, by the service token), their syncs are killed at
    /// random instants and the server restarted or killed; after final syncs every client equals
    /// the server on every list it may read and holds no other, nothing is pending, every store
    /// verifies, and no offline edit is lost silently: each is in the server's list, or was
    /// reported as a `listDeleted` conflict, or its list was deleted after it.
    @Test func setsSyncingThroughAServerConvergeThroughKillsAndRestarts() async throws {
        let dir = try TemporaryDirectory()
        let sourcePath = dir.url.appendingPathComponent("source.liststore").path
        let names = ["users/u0/a", "users/u0/b", "users/u1/a", "users/u1/b", "users/u2/a", "teams/red/plan", "teams/red/notes", "teams/blue/x"]
        do {
            let source = try Store(path: sourcePath)
            for name in names { try await source.commit(linearList(3), to: name) }
            try source.close()
        }
        let access = try dir.file("auth.json", Self.accessFile())
        let server = try ConvergenceProcessTests.Server(db: sourcePath, ["--token", "service", "--auth", access])
        defer { server.stop() }
        let users = ["u0", "u1", "u2"]
        let tokens = users.map { Self.token($0, teams: ["red"], adminOf: $0 == "u2" ? ["red"] : []) }
        let readable = { (c: Int, list: String) in list.hasPrefix("users/\(users[c])/") || list.hasPrefix("teams/red/") }
        let clients = users.indices.map { dir.url.appendingPathComponent("c\($0).liststore").path }
        var rng = SplitMix64(seed: 0x5E75)
        var (kills, restarts, deletions, edits) = (0, 0, 0, 0)
        var reported: [Int: Set<String>] = [:]
        // Each offline edit (client, list, item id, round), and each deletion (list, round).
        var edited: [(client: Int, list: String, id: String, round: Int)] = []
        var deleted: [(list: String, round: Int)] = []

        func sync(_ c: Int) async throws {
            let result = try await CLIRunner.runOffPool(["sync", "--from", server.url, "--token", tokens[c], "--lists", "**", "--replica", clients[c], "--json"])
            #expect(result.status == 0, "sync of client \(c): \(result.stderr)")
            guard let conflicts = try result.object()["pull"]?["conflicts"]?.objectValue else { return }
            for (list, report) in conflicts {
                for conflict in report.arrayValue ?? [] where conflict["kind"] == "listDeleted" {
                    reported[c, default: []].insert(list + "/" + (conflict["id"]?.stringValue ?? "?"))
                }
            }
        }
        for c in clients.indices { try await sync(c) }

        for round in 0..<Self.rounds {
            let c = Int(rng.next() % UInt64(clients.count))
            let name = names[Int(rng.next() % UInt64(names.count))]
            switch rng.next() % 13 {
            case 0..<3:  // a commit at the source, which keeps what others wrote (or makes a list anew)
                let source = try Store(path: sourcePath)
                if var sections = try? await source.snapshot(of: name).sections, !sections.isEmpty {
                    sections[0].elements.append(ListItem(id: "s-r\(round)", json: .string("direct")))
                    try await source.commit(sections, to: name)
                } else {
                    try await source.commit(linearList(2 + Int(rng.next() % 5), content: round), to: name)
                }
                try source.close()
            case 3:  // a list deleted over HTTP: a team list by its admin, another by the service token
                let token = name.hasPrefix("teams/red/") ? tokens[2] : "service"
                let encoded = name.replacingOccurrences(of: "/", with: "%2F")
                let url = server.url + "/v1/lists/" + encoded
                let answer = try await CLIRunner.offPool { try HTTP.request("DELETE", url, token: token) }
                #expect([200, 404].contains(answer.status), "DELETE \(name): \(answer.status)")
                if answer.status == 200 {
                    deletions += 1
                    deleted.append((name, round))
                }
            case 4..<7:  // an offline edit on client c
                let store = try Store(path: clients[c])
                let lists = try await store.lists()
                if !lists.isEmpty {
                    let list = lists[Int(rng.next() % UInt64(lists.count))].name
                    var sections = try await store.snapshot(of: list).sections
                    if !sections.isEmpty {
                        sections[0].elements.append(ListItem(id: "c\(c)-r\(round)", json: .string("offline")))
                        if try await store.commit(sections, to: list).pendingSeq != nil {
                            edits += 1
                            edited.append((c, list, "c\(c)-r\(round)", round))
                        }
                    }
                }
                try store.close()
            case 7..<10:
                try await sync(c)
            case 10, 11:  // a sync killed at a random point: at once, at its first write to the
                // replica (a pull applying), or at the server's first write to the source (its push merged)
                let watched: Store? = [nil, try Store(path: clients[c]), try Store(path: sourcePath)][Int(rng.next() % 3)]
                let generation = watched?.commitGeneration()
                let child = try CLIRunner.start(["sync", "--from", server.url, "--token", tokens[c], "--lists", "**", "--replica", clients[c]])
                if let watched, let generation {
                    // Each wait ends at the store's next commit (another process's, heard through the
                    // file's notifications); between waits, a child that has ended needs no kill.
                    while child.isRunning, watched.commitGeneration() == generation {
                        await watched.waitForCommit(after: generation, timeout: .milliseconds(100))
                    }
                }
                kill(child.processIdentifier, SIGKILL)
                child.waitUntilExit()
                try watched?.close()
                kills += 1
            default:  // the server stopped (or killed) and started again
                try server.restart(killing: rng.next() % 2 == 0)
                restarts += 1
            }
        }
        for _ in 0..<2 { for c in clients.indices { try await sync(c) } }

        let source = try Store(path: sourcePath)
        for c in clients.indices {
            let store = try Store(path: clients[c])
            let expected = try await source.lists().filter { readable(c, $0.name) }
            let held = try await store.lists().map(\.name)
            #expect(held == expected.map(\.name), "client \(c) holds \(held), the server \(expected.map(\.name))")
            for summary in expected {
                #expect(try await store.summary(of: summary.name).digest == summary.digest, "client \(c), \(summary.name)")
                #expect(try await store.outbox(of: summary.name).isEmpty, "client \(c), \(summary.name)")
            }
            #expect(try await store.verify().isValid)
            // The set's status keeps the changes dropped with deleted lists.
            let status = try await CLIRunner.runOffPool(["status", "--db", clients[c], "--lists", "**", "--json"]).object()
            for (list, report) in status["lastConflicts"]?.objectValue ?? [:] {
                for conflict in report.arrayValue ?? [] {
                    #expect(conflict["kind"] == "listDeleted")
                    reported[c, default: []].insert(list + "/" + (conflict["id"]?.stringValue ?? "?"))
                }
            }
            for edit in edited where edit.client == c {
                let inSource = (try? await source.snapshot(of: edit.list).sections.flatMap(\.elements).contains { $0.id == edit.id }) ?? false
                let wasReported = reported[c, default: []].contains(edit.list + "/" + edit.id)
                let listWent = deleted.contains { $0.list == edit.list && $0.round > edit.round }
                #expect(inSource || wasReported || listWent, "client \(c)'s edit \(edit.id) of \(edit.list) is lost (deletions \(deleted.filter { $0.list == edit.list }.map(\.round)))")
                // A list deleted after the edit and made anew under its name is another list: the
                // edit went with the old one, or was reported, and never reached the new one.
                #expect(!(inSource && listWent), "client \(c)'s edit \(edit.id) of \(edit.list) was merged into a list made after the one it was made for")
            }
            try store.close()
        }
        #expect(try await source.verify().isValid)
        #expect(kills > 0 && restarts > 0 && deletions > 0 && edits > 0, "kills \(kills), restarts \(restarts), deletions \(deletions), edits \(edits)")
    }
}
