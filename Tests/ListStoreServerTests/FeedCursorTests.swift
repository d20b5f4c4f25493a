import Foundation
import ListDiff
import ListJSON
import ListMerge
import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import ListStoreWire
import ListSync
import Testing

/// The store feed's cursors: a user's tells nothing of the lists it cannot read (sealed, answered
/// the same whether or not others' lists moved), and a cursor of another history of the store (a
/// restore without `advance-epoch`) is told apart, so that a replica set starts over and reports.
@Suite struct FeedCursorTests {
    /// The place of a cursor's text (after `<uuid>.<epoch>.`).
    static func place(_ cursor: String) -> String { String(cursor.split(separator: ".", maxSplits: 2)[2]) }

    @Test func aUsersCursorsAreSealedAndSayNothingOfOthersCommits() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        for list in ["users/ana/inbox", "users/bob/secret"] { try await store.commit(linearList(3), to: list) }
        let tokens = AccessServerTests.tokens
        let ana = tokens.token(["sub": "ana"])
        try await ServerHarness.with(store, try await AccessServerTests.configuration()) { server in
            var server = server
            server.token = "service"
            let first = try StoreFeedRouteTests.page(try await server.request("/v1/changes?lists=**", token: ana))
            #expect(first.events.map(\.list) == ["users/ana/inbox"])
            // Bob commits; Ana's next answer is as it would be without: no events, a sealed cursor
            // of the same length, unrelated to the last (a new nonce), and no hint of more.
            for count in 4...6 { try await store.commit(linearList(count), to: "users/bob/secret") }
            let second = try StoreFeedRouteTests.page(try await server.request("/v1/changes?lists=**&since=\(first.cursor)", token: ana))
            #expect(second.events.isEmpty && !second.hasMore)
            #expect(Self.place(first.cursor).hasPrefix("s") && Self.place(second.cursor).hasPrefix("s"))
            #expect(Self.place(first.cursor).count == Self.place(second.cursor).count && first.cursor != second.cursor)
            #expect(try FeedCursor(parsing: second.cursor).point == nil)

            // Per-event cursors are sealed too, and resume exactly after their event.
            try await store.commit(linearList(4), to: "users/ana/inbox")
            try await store.commit(linearList(7), to: "users/bob/secret")
            try await store.commit(linearList(5), to: "users/ana/inbox")
            let answer = try await server.request("/v1/changes?lists=**&since=\(second.cursor)", token: ana)
            let events = try #require(try JSONValue(parsing: answer.body)["events"]?.arrayValue)
            let cursors = events.compactMap { $0["cursor"]?.stringValue }
            #expect(cursors.count == 2 && cursors.allSatisfy { Self.place($0).hasPrefix("s") })
            let resumed = try StoreFeedRouteTests.page(try await server.request("/v1/changes?lists=**&since=\(cursors[0])", token: ana))
            #expect(resumed.events.map(\.version) == [3])

            // A long poll is not answered for another's commit: held, it answers with Ana's own.
            let held = Task {
                try StoreFeedRouteTests.page(try await server.request("/v1/changes?lists=**&wait=30&since=\(resumed.cursor)", token: ana))
            }
            try await LimitTests.waitUntil { server.server.state.streams.current == 1 }
            for count in 8...10 { try await store.commit(linearList(count), to: "users/bob/secret") }
            try await store.commit(linearList(6), to: "users/ana/inbox")
            let woken = try await held.value
            #expect(woken.events.map(\.list) == ["users/ana/inbox"] && woken.events.map(\.version) == [4])

            // A user's plain cursor (one a position could be guessed with) or a forged one cannot be
            // followed (410, as a cursor too old: the client reads its lists anew), and the answer
            // names no position of the feed.
            let identity = try await store.identity()
            for forged in ["\(identity.uuid).\(identity.epoch).3", "\(identity.uuid).\(identity.epoch).s" + String(repeating: "A", count: 59)] {
                let refused = try await server.request("/v1/changes?lists=**&since=\(forged)", token: ana)
                #expect(refused.status == 410 && StoreFeedRouteTests.code(refused) == "cursorExpired", "\(forged)")
                let message = try WireDocument.decodeError(refused.body).message
                #expect(message.allSatisfy { !$0.isNumber }, "\(forged): \(message)")
            }
            // The service token reads every list, and its cursors say where they are.
            let service = try StoreFeedRouteTests.page(try await server.request("/v1/changes?lists=**"))
            #expect(try FeedCursor(parsing: service.cursor).point?.position == 12)
        }
    }

    /// A user's event stream: its events' ids and its keep-alives carry sealed cursors.
    @Test func aUsersEventStreamCarriesSealedCursors() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "users/ana/inbox")
        let ana = AccessServerTests.tokens.token(["sub": "ana"])
        try await ServerHarness.with(store, try await AccessServerTests.configuration()) { server in
            let source = try HTTPSource(server.url, token: ana)
            var ids: [FeedCursor] = []
            for try await change in source.followChanges(of: try ListPattern("**"), after: nil) {
                ids.append(change.cursor)
                if change.event != nil { try await store.commit(linearList(4), to: "users/bob/other") }
                if ids.count == 3 { break }  // the event, then keep-alives
            }
            #expect(ids.allSatisfy(\.isSealed) && Set(ids).count == 3)
        }
    }

    /// The issue's third case, a replica set of a source restored from a backup without
    /// `advance-epoch`: the set tells its cursor is of another history, starts over, gets the
    /// lists made since, pushes what it can and reports the rest.
    @Test(arguments: ListIdentityTests.Via.allCases)
    func aSetOfASourceRestoredWithoutANewEpochStartsOverAndReports(_ via: ListIdentityTests.Via) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("source.liststore")
        var store = try Store(path: path)
        try await store.commit(linearList(2), to: "p/a")
        try store.close()
        try FileManager.default.copyItem(atPath: path, toPath: directory.file("backup.liststore"))
        store = try Store(path: path)
        try await store.commit(linearList(3), to: "p/a")
        try await store.commit(linearList(2), to: "p/b")
        let phone = try Store(path: directory.file("phone.liststore"))
        let set = try ReplicaSet(store: phone, lists: "p/**")

        func withSource(_ body: (any FeedSource) async throws -> Void) async throws {
            switch via {
            case .local: try await body(LocalSource(store))
            case .http: try await ServerHarness.with(store) { server in try await body(try server.source()) }
            }
        }
        try await withSource { source in try await set.pull(from: source) }
        var mine = linearList(3)
        mine[0].elements.append(ListItem(id: "mine-a", json: .string("offline")))
        try await phone.commit(mine, to: "p/a")
        var mineB = linearList(2)
        mineB[0].elements.append(ListItem(id: "mine-b", json: .string("offline")))
        try await phone.commit(mineB, to: "p/b")

        try store.close()
        try StoreFileFaults.restoreInPlace(path, from: directory.file("backup.liststore"))
        store = try Store(path: path)
        try await store.commit(linearList(1, prefix: "c"), to: "p/c")
        try await store.commit(linearList(2, prefix: "c"), to: "p/c")
        try await store.commit(linearList(4), to: "p/a")

        try await withSource { source in
            let synced = try await set.sync(with: source)
            #expect(synced.pull.resynced && synced.pull.reason == .historyChanged)
            // p/c came; p/b's change is reported with the list, which the source no longer has.
            #expect(try await phone.lists().map(\.name) == ["p/a", "p/c"])
            let reported = try #require(synced.pull.conflicts["p/b"])
            #expect(reported.map(\.kind) == [.listDeleted] && reported.map(\.item.id) == ["mine-b"])
            // p/a's change reached the source, and the set equals it.
            #expect(try await store.snapshot(of: "p/a").sections[0].elements.map(\.id).contains("mine-a"))
            let expected = try await store.lists().filter { $0.name.hasPrefix("p/") }
            #expect(try await phone.lists().map(\.name) == expected.map(\.name))
            for summary in expected { #expect(try await phone.summary(of: summary.name).digest == summary.digest, "\(summary.name)") }
            let again = try await set.sync(with: source)
            #expect(!again.pull.resynced && again.pull.conflicts.isEmpty)
        }
    }

    /// At the store: a cursor whose position the restored store gave another event is refused with
    /// `cursorOfAnotherHistory`; one whose event is still there is followed.
    @Test func aRestoredStoreTellsACursorOfItsFormerHistory() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("source.liststore")
        var store = try Store(path: path)
        try await store.commit(linearList(2), to: "a")
        let early = try await store.feed()
        try store.close()
        try FileManager.default.copyItem(atPath: path, toPath: directory.file("backup.liststore"))
        store = try Store(path: path)
        try await store.commit(linearList(3), to: "a")
        let late = try await store.feed(after: early.position, fingerprint: early.fingerprint)
        #expect(late.events.count == 1 && late.fingerprint != nil)
        try store.close()
        try StoreFileFaults.restoreInPlace(path, from: directory.file("backup.liststore"))
        store = try Store(path: path)
        try await store.commit(linearList(3), to: "a")  // the same commit, at the same position
        #expect(try await store.feed(after: early.position, fingerprint: early.fingerprint).events.count == 1)
        do {
            _ = try await store.feed(after: late.position, fingerprint: late.fingerprint)
            Issue.record("a cursor of the former history was followed")
        } catch let error as StoreError {
            #expect(error.code == .cursorOfAnotherHistory)
        }
        // A deleted list's commits keep their place: a cursor at one is still checked.
        try await store.commit(linearList(1), to: "b")
        let atB = try await store.feed(after: late.position - 1, fingerprint: nil)
        try await store.deleteList("b")
        #expect(try await store.feed(after: atB.position, fingerprint: atB.fingerprint).events.map(\.isDeletion) == [true])
        await #expect(throws: StoreError.self) { _ = try await store.feed(after: atB.position, fingerprint: 42) }
    }
}
