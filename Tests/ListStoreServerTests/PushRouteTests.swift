import Foundation
import ListJSON
import ListStore
import ListStorePostgresTestSupport
import ListStoreTestSupport
import ListStoreWire
import ListSync
import Testing

/// Pushes over HTTP: `POST /v1/lists/L/pushes` and `GET /v1/lists/L/pushes/CLIENT` on a
/// real server, driven by the real client (`HTTPSource`, `Replica`) and by plain requests.
@Suite struct PushRouteTests {
    /// A push document of `client`'s change `seq`: `intents` is the JSON text of its intents.
    static func document(client: String = "c1", seq: Int, _ intents: String, author: String? = nil) -> String {
        let author = author.map { ",\"author\":\(JSONValue.string($0).serialized())" } ?? ""
        return "{\"client\":\(JSONValue.string(client).serialized()),\"seq\":\(seq),\"intents\":[\(intents)]\(author)}"
    }

    /// The push of `document`.
    static func push(client: String = "c1", seq: Int, _ intents: String, author: String? = nil) throws -> Push {
        try WireDocument.decodePush(Array(document(client: client, seq: seq, intents, author: author).utf8))
    }

    /// Inserts element `id` (content 7) into section "s" between `after` and `before`.
    static func insert(_ id: String, after: String, before: String) -> String {
        "{\"op\":\"insertElement\",\"id\":\"\(id)\",\"content\":7,\"section\":\"s\",\"after\":\"\(after)\",\"before\":\"\(before)\"}"
    }

    /// The element ids of `list`'s head.
    static func ids(_ store: Store, _ list: String = "l") throws -> [String] {
        try store.snapshot(of: list).sections.flatMap { $0.elements.map(\.id) }
    }

    @Test(arguments: ServerAccess.withToken)
    func aPushMergesOnceAndItsRetryGetsTheRecordedAnswer(_ access: ServerAccess) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")  // s: e0 e1 e2
        try await ServerHarness.with(store, access) { server in
            let source = try server.source()

            let push = try Self.push(seq: 1, Self.insert("x", after: "e0", before: "e1"), author: "ana")
            let answer = try await source.push(push, to: "l")
            #expect(answer == PushAnswer(list: "l", version: 2, seq: 1, duplicate: false, conflicts: [], fingerprint: push.fingerprint))
            #expect(try Self.ids(store) == ["e0", "x", "e1", "e2"])
            let entry = try #require(try await store.journal(of: "l", after: 1).entries.first)
            #expect(entry.pushID == PushID(client: "c1", seq: 1) && entry.author == "ana")

            // The answer was lost, say: the same push again is answered from the record, applied once.
            let again = try await source.push(push, to: "l")
            #expect(again == PushAnswer(list: "l", version: 2, seq: 1, duplicate: true, conflicts: [], fingerprint: push.fingerprint))
            #expect(try await store.journal(of: "l", after: 0).entries.map(\.version) == [1, 2])
            #expect(try Self.ids(store) == ["e0", "x", "e1", "e2"])

            // The same id with other content (another replica under this client id) is refused with 409
            // pushMismatch and applies nothing; so is a sequence number that skips ahead.
            for (seq, intent) in [(1, Self.insert("y", after: "e0", before: "e1")), (3, Self.insert("z", after: "e0", before: "e1"))] {
                let other = try Self.push(seq: seq, intent, author: "ana")
                let refused = await #expect(throws: StoreError.self) { try await source.push(other, to: "l") }
                #expect(refused?.code == (seq == 1 ? .pushMismatch : .pushOutOfOrder))
                let raw = try await server.request(
                    "/v1/lists/l/pushes", method: "POST", body: String(decoding: WireDocument.push(other), as: UTF8.self))
                #expect(raw.status == 409)
                #expect(try WireDocument.decodeError(raw.body).code == (seq == 1 ? "pushMismatch" : "pushOutOfOrder"))
            }
            #expect(try await store.journal(of: "l", after: 0).entries.map(\.version) == [1, 2])

            // A clash with a commit made meanwhile: mine's content wins and the answer reports it, the
            // journal entry too (as the server sends it).
            try await store.commit([ListSection(model: ListItem("s"), elements: ["e0", "x", "e1", "e2"].map { ListItem($0, $0 == "e1" ? 5 : 0) })], to: "l")
            let update = #"{"op":"updateElement","id":"e1","section":"s","base":1,"content":10}"#
            let clash = try await source.push(try Self.push(seq: 2, update), to: "l")
            #expect(clash.version == 4 && !clash.duplicate && clash.conflicts.count == 1)
            let report = try JSONValue(parsing: WireDocument.pushAnswer(clash))["conflicts"]?.arrayValue
            #expect(report == [["kind": "contentConflict", "id": "e1", "section": "s", "mine": 10, "theirs": 5]])
            let journal = try WireDocument.decodeJournal(try await server.request("/v1/lists/l/journal?since=3").body)
            #expect(journal.entries.first?.pushID == PushID(client: "c1", seq: 2) && journal.entries.first?.conflicts == clash.conflicts)

            // The source's record of a client's pushes, for the answers a replica never heard.
            let first = PushAnswer(list: "l", version: 2, seq: 1, duplicate: false, conflicts: [], fingerprint: push.fingerprint)
            let second = PushAnswer(
                list: "l", version: 4, seq: 2, duplicate: false, conflicts: clash.conflicts, fingerprint: try Self.push(seq: 2, update).fingerprint)
            #expect(try await source.pushes(from: "c1", to: "l", seqs: 1...9) == [first, second])
            #expect(try await source.pushes(from: "c1", to: "l", seqs: 2...2) == [second])
            #expect(try await source.pushes(from: "someone else", to: "l", seqs: 1...9) == [])
            let all = try await server.request("/v1/lists/l/pushes/c1")
            #expect(all.status == 200)
            #expect(try WireDocument.decodePushes(all.body) == [first, second])
            let none = try await server.request("/v1/lists/l/pushes/nobody?from=1&to=5")
            #expect(none.status == 200)
            #expect(try JSONValue(parsing: none.body) == JSONValue(parsing: Array(#"{"list":"l","pushes":[],"schemaVersion":1}"#.utf8)))
            for query in ["?from=3&to=2", "?from=-1", "?to=x"] {
                let bad = try await server.request("/v1/lists/l/pushes/c1" + query)
                #expect(bad.status == 400 && (try? WireDocument.decodeError(bad.body).code) == "invalidArgument", "\(query)")
            }
            let unknown = try await server.request("/v1/lists/nope/pushes/c1")
            #expect(unknown.status == 404 && (try? WireDocument.decodeError(unknown.body).code) == "listNotFound")
            // A name no list can have (a control character) is refused as the document says.
            let invalid = try await server.request("/v1/lists/~O%01/pushes/c1")
            #expect(invalid.status == 400 && (try? WireDocument.decodeError(invalid.body).code) == "invalidListName")
        }
    }

    /// On every engine, with and without access.
    @Test(arguments: EngineKind.available, ServerAccess.withoutToken)
    func replicasSyncingOverHTTPEndEqualToTheSource(_ engine: EngineKind, _ access: ServerAccess) async throws {
        let directory = try TemporaryDirectory()
        try await engine.withStore { stores in
            let store = stores[0]
            try await store.commit(linearList(4), to: "l", expectedVersion: nil, author: nil, message: nil)  // s: e0 e1 e2 e3
            try await ServerHarness.with(store, access) { server in
                let source = try server.source()
                let phone = Replica(store: try Store(path: directory.file("phone.liststore")), list: "l")
                let laptop = Replica(store: try Store(path: directory.file("laptop.liststore")), list: "l")
                for replica in [phone, laptop] { try await replica.pull(from: source) }

                // Offline: the phone moves e3 first and adds p; the laptop removes e1 and adds q at the end;
                // the source itself changes e2.
                try await phone.store.commit(
                    [ListSection(model: ListItem("s"), elements: [ListItem("e3", 3), ListItem("e0", 0), ListItem("p", 9), ListItem("e1", 1), ListItem("e2", 2)])],
                    to: "l")
                try await laptop.store.commit(
                    [ListSection(model: ListItem("s"), elements: [ListItem("e0", 0), ListItem("e2", 2), ListItem("e3", 3), ListItem("q", 8)])], to: "l")
                try await store.commit(
                    [ListSection(model: ListItem("s"), elements: (0..<4).map { ListItem("e\($0)", $0 == 2 ? 20 : $0) })], to: "l",
                    expectedVersion: nil, author: nil, message: nil)

                let first = try await phone.sync(with: source)
                #expect(first.push.pushed == 1 && first.push.conflicts.isEmpty && first.pull.pending == 0 && first.pull.confirmedChanges == 1)
                let second = try await laptop.sync(with: source)
                #expect(second.push.pushed == 1 && second.pull.pending == 0)
                try await phone.sync(with: source)

                // q goes right after e3, its neighbour on the laptop, wherever the phone moved e3.
                let head = try await store.snapshot(of: "l", at: nil)
                #expect(head.sections.flatMap { $0.elements.map(\.id) } == ["e3", "q", "e0", "p", "e2"])
                #expect(head.sections[0].elements[4] == ListItem("e2", 20))
                for replica in [phone, laptop] {
                    let mine = try await replica.store.snapshot(of: "l")
                    #expect(mine.sections == head.sections && mine.digest == head.digest)
                    #expect(try await replica.store.outbox(of: "l").isEmpty)
                    #expect(try await replica.status()?.source.version == head.version)
                    #expect(try await replica.store.verify().isValid)
                }
                #expect(try await store.verify(list: nil, progress: nil).isValid)
            }
        }
    }

    /// A hand-written push into a section the list never had is answered as such (the rebase's
    /// kind with `"unknownSection": true`, which the client reads as `unknownSection`); into a
    /// section the list deleted, as `sectionDeleted`.
    @Test(arguments: ServerAccess.withToken)
    func aPushIntoASectionTheListNeverHadIsToldFromOneItDeleted(_ access: ServerAccess) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3) + [ListSection(model: ListItem("t"), elements: [])], to: "l")
        try await store.commit(linearList(3), to: "l")  // "t" deleted
        try await ServerHarness.with(store, access) { server in
            let intents = [("nowhere", 1), ("t", 2)].map { section, seq in
                "{\"op\":\"insertElement\",\"id\":\"x\(seq)\",\"content\":7,\"section\":\"\(section)\",\"after\":null,\"before\":null}"
            }
            let raw = try await server.request("/v1/lists/l/pushes", method: "POST", body: Self.document(seq: 1, intents.joined(separator: ",")))
            #expect(raw.status == 200)
            let report = try JSONValue(parsing: raw.body)["conflicts"]?.arrayValue
            #expect(report == [
                ["kind": "sectionDeleted", "id": "x1", "section": "nowhere", "mine": 7, "unknownSection": true],
                ["kind": "sectionDeleted", "id": "x2", "section": "t", "mine": 7],
            ])
            let answer = try WireDocument.decodePushAnswer(raw.body)
            #expect(answer.conflicts.map(\.kind) == [.unknownSection, .sectionDeleted])
            #expect(try Self.ids(store) == ["e0", "e1", "e2"])
        }
    }

    @Test(arguments: ServerAccess.withToken)
    func badPushesAreRefusedWithTheirStatusAndChangeNothing(_ access: ServerAccess) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        try await ServerHarness.with(store, access, maxBodyBytes: 4096) { server in
            let source = try server.source()
            let mine = try #require(server.token)
            // Client c2 has pushed its change 3; its change 2 never reached the source.
            _ = try await source.push(try Self.push(client: "c2", seq: 3, Self.insert("y", after: "e1", before: "e2")), to: "l")
            let version = try await store.summary(of: "l").version
            let journal = try await store.journal(of: "l", after: 0)

            let valid = Self.document(seq: 1, Self.insert("x", after: "e0", before: "e1"))
            let deep = String(repeating: "[", count: 501) + String(repeating: "]", count: 501)
            let tooDeep = Self.document(
                seq: 1, "{\"op\":\"insertElement\",\"id\":\"z\",\"content\":\(deep),\"section\":\"s\",\"after\":null,\"before\":null}")
            let cases: [(path: String, body: String, token: String?, status: Int, code: String)] = [
                ("/v1/lists/l/pushes", "not json", mine, 400, "invalidPush"),
                ("/v1/lists/l/pushes", "[1,2]", mine, 400, "invalidPush"),
                ("/v1/lists/l/pushes", #"{"client":"c1","seq":0,"intents":[]}"#, mine, 400, "invalidPush"),
                ("/v1/lists/l/pushes", #"{"client":"c1","seq":1}"#, mine, 400, "invalidPush"),
                ("/v1/lists/l/pushes", #"{"client":7,"seq":1,"intents":[]}"#, mine, 400, "invalidPush"),
                ("/v1/lists/l/pushes", #"{"client":"c1","seq":1,"intents":[{"op":"fly","id":"e0"}]}"#, mine, 400, "invalidPush"),
                ("/v1/lists/l/pushes", tooDeep, mine, 400, "invalidSnapshot"),
                ("/v1/lists/l/pushes", "{\"intents\":[" + String(repeating: " ", count: 5000) + "]}", mine, 413, "bodyTooLarge"),
                ("/v1/lists/l/pushes", valid, nil, 401, "unauthorized"),
                ("/v1/lists/l/pushes", valid, "wrong", 401, "unauthorized"),
                ("/v1/lists/nope/pushes", valid, mine, 404, "listNotFound"),
                ("/v1/lists/l/pushes", Self.document(client: "c2", seq: 2, Self.insert("x", after: "e0", before: "e1")), mine, 409, "pushOutOfOrder"),
            ]
            for bad in cases {
                let answer = try await server.request(bad.path, method: "POST", body: bad.body, token: bad.token, anonymous: bad.token == nil)
                #expect(answer.status == bad.status, "\(bad.body.prefix(60))")
                let error = try? WireDocument.decodeError(answer.body)
                #expect(error?.code == bad.code, "\(bad.body.prefix(60))")
                #expect(error.map { !$0.message.isEmpty && !$0.message.contains("\n") } == true)
                if bad.code == "invalidPush" { #expect(error?.message.hasPrefix("not a push document: ") == true, "\(error?.message ?? "")") }
            }
            #expect(try await server.request("/v1/lists/l/pushes/c1", anonymous: true).status == 401)

            // The client hears the store's codes.
            let insert = try Self.push(client: "c2", seq: 2, Self.insert("x", after: "e0", before: "e1"))
            await #expect {
                _ = try await source.push(insert, to: "nope")
            } throws: { ($0 as? StoreError)?.code == .listNotFound }
            await #expect {
                _ = try await source.push(insert, to: "l")
            } throws: { error in
                guard let error = error as? StoreError else { return false }
                return error.code == .pushOutOfOrder && error.message.contains("c2")
            }
            #expect(try await store.summary(of: "l").version == version)
            #expect(try await store.journal(of: "l", after: 0).entries == journal.entries)
            #expect(try await store.pushes(from: "c1", to: "l", seqs: 1...9).isEmpty)
            #expect(try await store.pushes(from: "c2", to: "l", seqs: 1...9).map(\.seq) == [3])
        }
    }
}
