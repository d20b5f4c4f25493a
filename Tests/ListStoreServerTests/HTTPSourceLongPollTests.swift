import Foundation
import ListStore
import ListStoreTestSupport
@testable import ListSync
import Logging
import Testing

/// `HTTPSource`'s long polls, as a cache in front of the server needs them: after one that ends
/// without a commit, the next of the list at that version carries its cursor.
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
            let first = try #require(await source.longPollCursors.cursor(of: "inbox", at: 1))
            #expect(try await source.waitForCommit(to: "inbox", after: 1, timeout: .seconds(1)) == false)
            let second = try #require(await source.longPollCursors.cursor(of: "inbox", at: 1))
            #expect(second > first)
            try await store.commit(linearList(4), to: "inbox")
            #expect(try await source.waitForCommit(to: "inbox", after: 1, timeout: .seconds(1)) == true)
            #expect(await source.longPollCursors.cursor(of: "inbox", at: 1) == nil)
            #expect(try await source.waitForCommit(to: "inbox", after: 2, timeout: .seconds(0)) == false)
            // What the server was asked, in order (its request log holds each request's URI).
            let polls = recorder.events.compactMap { $0.metadata?["hb.request.path"]?.description }.filter { $0.contains("/journal?") }
            #expect(
                polls == [
                    "/v1/lists/inbox/journal?since=1&limit=0&wait=1",
                    "/v1/lists/inbox/journal?since=1&limit=0&wait=1&cursor=\(first)",
                    "/v1/lists/inbox/journal?since=1&limit=0&wait=1&cursor=\(second)",
                    "/v1/lists/inbox/journal?since=2&limit=0&wait=0",
                ], "\(polls)")
        }
    }

    /// The cursors kept are bounded: past `maxLists` lists, the older are forgotten.
    @Test func theCursorsOfAtMostMaxListsAreKept() async {
        let cursors = LongPollCursors()
        for list in 0..<(LongPollCursors.maxLists * 3) { await cursors.note(list, of: "l\(list)", at: 1) }
        var kept = 0
        for list in 0..<(LongPollCursors.maxLists * 3) where await cursors.cursor(of: "l\(list)", at: 1) != nil { kept += 1 }
        #expect(kept > 0 && kept <= LongPollCursors.maxLists)
        await cursors.note(nil, of: "l\(LongPollCursors.maxLists * 3 - 1)", at: 1)
        #expect(await cursors.cursor(of: "l\(LongPollCursors.maxLists * 3 - 1)", at: 1) == nil)
    }
}
