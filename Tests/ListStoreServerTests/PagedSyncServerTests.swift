import Foundation
import ListStore
import ListStoreTestSupport
@testable import ListStoreServer
import ListStoreWire
import ListSync
import Testing

/// Lists larger than what a client takes in one answer, over HTTP (ListStoreCore's article "Lists of
/// Any Size"): a client whose answer limit is a fraction of the list copies it in pages. The stores
/// are SQLite files, whose work runs on threads of their own, and the bodies on threads of their own
/// too (`.heavyWork`): decoding pages for seconds must not hold the threads other tests' servers need.
@Suite(.heavyWork) struct PagedSyncServerTests {
    /// `sections` sections of `elements` messages each, about 100 bytes of JSON per message.
    static func mailbox(sections: Int, elements: Int, tag: String = "") -> [ListSection] {
        (0..<sections).map { s in
            ListSection(
                model: ListItem(id: "s\(s)", json: ["title": "folder \(s)"]),
                elements: (0..<elements).map { e in
                    ListItem(id: "m\(s)-\(e)", json: ["title": "Message number \(e) from someone\(tag)", "n": .number(JSONNumber(e)), "read": false])
                })
        }
    }

    @Test func aClientWhoseAnswersAreSmallSyncsAListManyTimesLargerInPages() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("source.liststore"))
        // About 1.2 MB in one commit, then a small one: the first entry is larger than the client's bound.
        try await store.commit(Self.mailbox(sections: 30, elements: 400), to: "inbox", expectedVersion: nil, author: nil, message: nil)
        try await ServerHarness.with(store) { server in
            var source = try server.source()
            source.maxAnswerBytes = 128 << 10
            source.maxPageBytes = 48 << 10
            let replica = Replica(store: try Store(path: directory.file("replica.liststore")), list: "inbox")
            let reports = _Locked<[SyncProgress]>([])
            var options = ReplicaPullOptions()
            options.onProgress = { progress in reports.withLock { $0.append(progress) } }
            let result = try await replica.pull(from: source, options: options)
            #expect(result.resynced && result.reason == ResyncReason.tooLarge)
            #expect((result.pages?.pages ?? 0) > 20)
            #expect(try await replica.store.snapshot(of: "inbox", at: nil).sections == store.snapshot(of: "inbox", at: nil).sections)
            #expect(reports.withLock { $0.last?.fractionCompleted } == 1)
            // A later large commit goes the same way; a small one through the journal.
            try await store.commit(Self.mailbox(sections: 30, elements: 400, tag: "!"), to: "inbox", expectedVersion: nil, author: nil, message: nil)
            #expect(try await replica.pull(from: source).reason == ResyncReason.tooLarge)
            var sections = try await store.snapshot(of: "inbox", at: nil).sections
            sections[3].elements.remove(at: 7)
            try await store.commit(sections, to: "inbox", expectedVersion: nil, author: nil, message: nil)
            let small = try await replica.pull(from: source)
            #expect(!small.resynced && small.applied == 1 && small.pages == nil)
            #expect(try await replica.store.snapshot(of: "inbox", at: nil).sections == sections)
            #expect(try await replica.store.verify().isValid)
        }
    }

    @Test func pagesOverHTTPAreThoseOfTheStoreAndStayAtTheirVersionWhileKept() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("source.liststore"))
        try await store.commit(Self.mailbox(sections: 4, elements: 50), to: "inbox", expectedVersion: nil, author: nil, message: nil)
        try await ServerHarness.with(store) { server in
            var source = try server.source()
            source.maxPageBytes = 2000
            var pages = [try await source.page(of: "inbox", at: nil, after: nil, maxBytes: .max)]
            while let next = pages.last?.next { pages.append(try await source.page(of: "inbox", at: pages[0].version, after: next, maxBytes: .max)) }
            var direct = [try await store.page(of: "inbox", at: nil, after: nil, maxBytes: 2000)]
            while let next = direct.last?.next { direct.append(try await store.page(of: "inbox", at: direct[0].version, after: next, maxBytes: 2000)) }
            #expect(pages == direct)
            try await store.commit(Self.mailbox(sections: 4, elements: 51), to: "inbox", expectedVersion: nil, author: nil, message: nil)
            // The version read stays while the store keeps it; once let go, its next page is refused.
            #expect(try await source.page(of: "inbox", at: pages[0].version, after: pages[0].next, maxBytes: .max) == pages[1])
            try store.checkpoint()
            do {
                _ = try await source.page(of: "inbox", at: pages[0].version, after: pages[0].next, maxBytes: .max)
                Issue.record("a page of a version the head moved past was answered")
            } catch let error as StoreError {
                #expect(error.code == .versionNotFound)
            }
            // Bad input: one JSON error, nothing else.
            let bad = try await server.request("/v1/lists/inbox/pages?maxBytes=0")
            #expect(bad.status == 400 && (try? WireDocument.decodeError(bad.body).code) == "invalidArgument")
            let cursor = try await server.request("/v1/lists/inbox/pages?version=2&after=zz")
            #expect(cursor.status == 400 && (try? WireDocument.decodeError(cursor.body).code) == "invalidArgument")
        }
    }
}
