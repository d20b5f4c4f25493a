import Foundation
import ListDiffTestSupport
import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import ListSync
import Testing

/// A replica set following a server with a user's token: every list the token may read of the
/// pattern, over one event stream, while lists are written, created and deleted on the server and
/// changed in the replica.
@Suite struct ReplicaSetServerTests {
    @Test func aSetFollowsAUsersListsOverOneStreamAndPushesItsChanges() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("server.liststore"))
        for list in ["users/ana/inbox", "users/ana/work", "users/bob/inbox"] { try await store.commit(linearList(3), to: list) }
        let ana = AccessServerTests.tokens.token(["sub": "ana", "teams": ["red"]])
        let replica = try Store(path: directory.file("phone.liststore"))
        // `**` names bob's lists too: the token reads only ana's.
        let set = try ReplicaSet(store: replica, lists: "users/**")
        try await ServerHarness.with(store, try await AccessServerTests.configuration()) { server in
            let source = try HTTPSource(server.url, token: ana)
            let following = Task {
                try await set.follow(from: source, pushing: true, localPollInterval: .milliseconds(50), retrying: .standard) { _ in }
            }
            defer { following.cancel() }
            func names() async throws -> [String] { replica.exists ? try await replica.lists().map(\.name) : [] }
            try await waitUntil("the replica holds ana's lists") { try await names() == ["users/ana/inbox", "users/ana/work"] }
            // One stream for the set, waiting at the feed's head.
            try await waitUntil("the set's stream waits at the head") { server.server.waitingCount == 1 }

            try await store.commit(linearList(5), to: "users/ana/inbox")
            try await store.commit(linearList(2), to: "users/ana/projects/new")
            try await store.commit(linearList(9), to: "users/bob/inbox")
            _ = try await store.deleteList("users/ana/work")
            try await waitUntil("the replica follows") {
                guard try await names() == ["users/ana/inbox", "users/ana/projects/new"] else { return false }
                return try await replica.summary(of: "users/ana/inbox").digest == store.summary(of: "users/ana/inbox").digest
            }
            #expect(server.server.waitingCount <= 1)

            // A change made in the replica reaches the server.
            var mine = linearList(2)
            mine[0].elements.append(ListItem(id: "offline", json: .string("from the phone")))
            try await replica.commit(mine, to: "users/ana/projects/new")
            try await waitUntil("the change is pushed and confirmed") {
                guard try await store.snapshot(of: "users/ana/projects/new").sections[0].elements.contains(where: { $0.id == "offline" }) else { return false }
                return try await replica.outbox(of: "users/ana/projects/new").isEmpty
            }
            let (mineNow, theirs) = (try await replica.summary(of: "users/ana/projects/new").digest, try await store.summary(of: "users/ana/projects/new").digest)
            #expect(mineNow == theirs)
            following.cancel()
            _ = await following.result
        }
    }
}
