import Foundation
import ListStore
import ListStoreTestSupport
import ListSync
import Testing

/// On a phone's radio every request costs: a replica's pull in the steady state asks once.
@Suite struct QuietPullTests {
    /// The requests the server has counted, by route: `/metrics` and `/health` aside.
    static func counted(_ server: ServerHarness) async throws -> (requests: Int, health: Int) {
        let text = String(decoding: try await server.request("/metrics").body, as: UTF8.self)
        let samples = text.split(separator: "\n").filter { $0.hasPrefix("liststore_http_requests_total{") }
        func count(_ lines: [Substring]) -> Int { lines.reduce(0) { $0 + (Int($1.split(separator: " ").last ?? "") ?? 0) } }
        let health = samples.filter { $0.contains(#"route="/health""#) }
        let others = samples.filter { !$0.contains(#"route="/metrics""#) && !$0.contains(#"route="/health""#) }
        return (count(others), count(health))
    }

    /// The requests answered so far, once the server has counted them all: a request is counted
    /// just after its answer is written, so a health check made after them is counted after them,
    /// whatever it answers (503 when the store takes over a second, as on a loaded machine).
    static func answered(_ server: ServerHarness) async throws -> Int {
        let before = try await counted(server).health
        _ = try await server.request("/health")
        var now = try await counted(server)
        while now.health == before { now = try await counted(server) }
        return now.requests
    }

    /// The requests `body` makes.
    static func requests(_ server: ServerHarness, _ body: () async throws -> Void) async throws -> Int {
        let before = try await answered(server)
        try await body()
        return try await answered(server) - before
    }

    @Test func aPullOrSyncUpToDateOrAFewCommitsBehindIsOneRequest() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("server.liststore"))
        try await store.commit(linearList(3), to: "inbox")
        try await ServerHarness.with(store) { server in
            let source = try server.source()
            let replica = Replica(store: try Store(path: directory.file("phone.liststore")), list: "inbox")
            try await replica.pull(from: source)  // the first pull asks what it needs

            var result: ReplicaPullResult?
            #expect(try await Self.requests(server) { result = try await replica.pull(from: source) } == 1)
            #expect(result?.applied == 0 && result?.version == 1)

            for count in 4...6 { try await store.commit(linearList(count), to: "inbox") }
            #expect(try await Self.requests(server) { result = try await replica.pull(from: source) } == 1)
            #expect(result?.applied == 3 && result?.version == 4)

            var synced: ReplicaSyncResult?
            #expect(try await Self.requests(server) { synced = try await replica.sync(with: source) } == 1)
            #expect(synced?.push.pushed == 0 && synced?.pull.applied == 0 && synced?.pull.version == 4)
            #expect(try await replica.snapshot().sections == (try await store.snapshot(of: "inbox").sections))

            // With a local change: the push (the source's identity, the push), then the pull that
            // confirms it, which asks apart (the identity, the list, the journal, the pushes): not
            // quieted yet, and bounded here so that it does not grow.
            try await replica.edit { draft in try draft.removeElement("e0") }
            let pushing = try await Self.requests(server) { synced = try await replica.sync(with: source) }
            #expect(pushing <= 7, "\(pushing) requests")
            #expect(synced?.push.pushed == 1 && synced?.pull.pending == 0)
            #expect(try await store.snapshot(of: "inbox").sections == linearList(6).map { section in
                var section = section
                section.elements.removeFirst()
                return section
            })
        }
    }

    /// What the quiet pull does not cover goes to the full pull, with the same outcome: a history
    /// pruned past the replica, a new epoch, a list made again under its name.
    @Test func whatTheQuietPullDoesNotCoverTheFullPullHandles() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("server.liststore"))
        try await store.commit(linearList(3), to: "inbox")
        try await ServerHarness.with(store) { server in
            let source = try server.source()
            let replica = Replica(store: try Store(path: directory.file("phone.liststore")), list: "inbox")
            try await replica.pull(from: source)

            for count in 4...8 { try await store.commit(linearList(count), to: "inbox") }
            try await store.prune("inbox", .keepLast(1))
            var result = try await replica.pull(from: source)
            #expect(result.resynced && result.reason == .pruned && result.version == 6)

            try await store.advanceEpoch()
            try await store.commit(linearList(9), to: "inbox")
            result = try await replica.pull(from: source)
            #expect(result.resynced && result.reason == .epochChanged && result.version == 7)

            _ = try await store.deleteList("inbox")
            try await store.commit(linearList(2), to: "inbox")
            result = try await replica.pull(from: source)
            #expect(result.resynced && result.reason == .listReplaced)
            #expect(try await replica.snapshot().sections == linearList(2))
        }
    }
}
