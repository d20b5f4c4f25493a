import Foundation
import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import ListSync
import Testing

/// A list's event stream follows that list, not its name: when the list is deleted, the stream
/// ends with an error event, and when another list is made under the name meanwhile, none of the
/// new list's commits is written to it (as a long poll answers 404).
@Suite struct EventStreamListIdentityTests {
    enum Ending: CaseIterable, Sendable { case deleted, deletedAndMadeAgain }

    @Test(arguments: Ending.allCases) func aStreamEndsWithItsList(_ ending: Ending) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        for count in 3...5 { try await store.commit(linearList(count), to: "l") }
        try await ServerHarness.with(store) { server in
            let host = "Host: 127.0.0.1:\(server.port)\r\n"
            let events = try RawConnection(port: server.port)
            #expect(events.send("GET /v1/lists/l/events?since=2 HTTP/1.1\r\n\(host)\r\n"))
            _ = try await RawConnection.run { events.receive(timeout: .seconds(60)) { $0.contains("id: 3\n") } }
            try await LimitTests.waitUntil { server.server.waitingCount == 1 }
            try await store.deleteList("l")
            if ending == .deletedAndMadeAgain {
                // Made again before the server reads the heads, and past the stream's version.
                for count in 1...5 { try await store.commit(linearList(count), to: "l") }
            }
            let stream = try await RawConnection.run { events.receive(timeout: .seconds(60)) { $0.hasSuffix("0\r\n\r\n") } }
            #expect(stream.text.contains("event: error") && stream.text.contains("listNotFound"), "\(ending): \(stream.text)")
            #expect(!stream.text.contains("id: 4\n") && !stream.text.contains("id: 5\n"), "\(ending): \(stream.text)")
            #expect(stream.text.hasSuffix("0\r\n\r\n"), "\(ending): the stream did not end: \(stream.text)")
        }
    }
}

/// Event streams open while the store's epoch advances (`advance-epoch` after a restore) end with
/// an error event `cursorMismatch`, which tells their clients to resync: a list's stream and the
/// store feed's.
@Suite struct EventStreamEpochTests {
    @Test func streamsOpenAcrossAnAdvancedEpochAreToldToResync() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        try await ServerHarness.with(store) { server in
            let host = "Host: 127.0.0.1:\(server.port)\r\n"
            let list = try RawConnection(port: server.port)
            #expect(list.send("GET /v1/lists/l/events?since=0 HTTP/1.1\r\n\(host)\r\n"))
            _ = try await RawConnection.run { list.receive(timeout: .seconds(60)) { $0.contains("id: 1\n") } }
            let feed = try RawConnection(port: server.port)
            #expect(feed.send("GET /v1/events?lists=** HTTP/1.1\r\n\(host)\r\n"))
            _ = try await RawConnection.run { feed.receive(timeout: .seconds(60)) { $0.contains("event: commit") } }
            try await LimitTests.waitUntil { server.server.waitingCount == 2 }
            // The watcher knows the epoch the streams started under.
            try await LimitTests.waitUntil { server.server.state.storeIdentity != nil }
            _ = try await store.advanceEpoch()
            for (name, connection) in [("list", list), ("feed", feed)] {
                let end = try await RawConnection.run { connection.receive(timeout: .seconds(60)) { $0.hasSuffix("0\r\n\r\n") } }
                #expect(end.text.contains("event: error") && end.text.contains("cursorMismatch"), "\(name): \(end.text)")
                #expect(end.text.hasSuffix("0\r\n\r\n"), "\(name): the stream did not end: \(end.text)")
            }
        }
    }

    /// A replica following a server's list through its event stream, when the source's epoch
    /// advances: the stream ends, the replica pulls, which resyncs, and it follows on.
    @Test(.timeLimit(.minutes(2))) func aFollowingReplicaResyncsAcrossAnAdvancedEpoch() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        try await ServerHarness.with(store) { server in
            let replica = Replica(store: try Store(path: directory.file("r.liststore")), list: "l")
            let resyncs = _Locked(0)
            let follow = Task {
                try await replica.follow(from: try server.source()) { result in
                    if result.resynced { resyncs.withLock { $0 += 1 } }
                }
            }
            defer { follow.cancel() }
            try await waitUntil("the follow's event stream waits at the head") { server.server.waitingCount == 1 }
            try await LimitTests.waitUntil { server.server.state.storeIdentity != nil }
            _ = try await store.advanceEpoch()
            try await waitUntil("the replica resynced") { resyncs.withLock { $0 } == 1 }
            try await store.commit(linearList(5), to: "l")
            try await waitUntil("the replica follows on") { try await replica.store.snapshot(of: "l").sections == linearList(5) }
        }
    }
}
