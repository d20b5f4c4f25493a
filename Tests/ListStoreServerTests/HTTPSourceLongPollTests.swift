import Foundation
import ListStore
import ListStoreTestSupport
@testable import ListSync
import Logging
import Testing

/// `HTTPSource`'s long polls, as a cache in front of the server needs them: each carries a cursor,
/// 0 at first, and after one that ends without a commit, the next of the list at that version and
/// wait carries the cursor it was answered with.
@Suite struct HTTPSourceLongPollTests {
    @Test(.timeLimit(.minutes(1))) func aLongPollAfterAnEmptyOneCarriesItsCursorAndOneAfterACommitDoesNot() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "inbox")
        let recorder = ServerLogTests.Recorder()
        let logger = Logger(label: "test.server") { _ in ServerLogTests.RecordingHandler(recorder: recorder) }
        try await ServerHarness.with(store, .init(port: 0), logger: logger) { server in
            let source = try HTTPSource(url: URL(string: server.url)!)
            #expect(try await source.waitForCommit(to: "inbox", after: 1, timeout: .seconds(1)) == false)
            let key = LongPollCursors.Key(list: "inbox", version: 1, wait: 1)
            let first = try #require(await source.longPollCursors.cursor(at: key))
            #expect(try await source.waitForCommit(to: "inbox", after: 1, timeout: .seconds(1)) == false)
            let second = try #require(await source.longPollCursors.cursor(at: key))
            #expect(second > first)
            try await store.commit(linearList(4), to: "inbox")
            #expect(try await source.waitForCommit(to: "inbox", after: 1, timeout: .seconds(1)) == true)
            #expect(await source.longPollCursors.cursor(at: key) == nil)
            #expect(try await source.waitForCommit(to: "inbox", after: 2, timeout: .seconds(0)) == false)
            // What the server was asked, in order (its request log holds each request's URI).
            let polls = recorder.events.compactMap { $0.metadata?["hb.request.path"]?.description }.filter { $0.contains("/journal?") }
            #expect(
                polls == [
                    "/v1/lists/inbox/journal?since=1&limit=0&wait=1&cursor=0",
                    "/v1/lists/inbox/journal?since=1&limit=0&wait=1&cursor=\(first)",
                    "/v1/lists/inbox/journal?since=1&limit=0&wait=1&cursor=\(second)",
                    "/v1/lists/inbox/journal?since=2&limit=0&wait=0",
                ], "\(polls)")
        }
    }

    /// The cursors kept are bounded: past `maxLists` lists, they are forgotten; a cursor is kept for
    /// its list, version and wait only.
    @Test func theCursorsOfAtMostMaxListsAreKeptEachForItsVersionAndWait() async {
        let cursors = LongPollCursors()
        let count = LongPollCursors.maxLists * 3
        func key(_ list: Int) -> LongPollCursors.Key { LongPollCursors.Key(list: "l\(list)", version: 1, wait: 30) }
        for list in 0..<count { await cursors.note(list, at: key(list)) }
        var kept = 0
        for list in 0..<count where await cursors.cursor(at: key(list)) != nil { kept += 1 }
        #expect(kept > 0 && kept <= LongPollCursors.maxLists)
        let last = key(count - 1)
        #expect(await cursors.cursor(at: last) == count - 1)
        #expect(await cursors.cursor(at: LongPollCursors.Key(list: last.list, version: 2, wait: 30)) == nil)
        #expect(await cursors.cursor(at: LongPollCursors.Key(list: last.list, version: 1, wait: 60)) == nil)
        await cursors.note(nil, at: last)
        #expect(await cursors.cursor(at: last) == nil)
    }
}
