import Foundation
import ListDiff
import ListDiffTestSupport
import ListJSON
import ListStore
import ListStoreTestSupport
import Testing

@Suite(.heavyWork) struct StoreCommitTests {
    @Test func randomHistoryReplaysToEveryCommittedSnapshot() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("history.liststore")
        var random = RandomSnapshots(seed: 0x5707E, duplicates: true)
        var committed: [[ListSection]] = [[]]
        var digests: [ListDigest] = [ListDigest.of([])]
        do {
            let store = try Store(path: path)
            var current = random.snapshot(maxSections: 5, maxElements: 8)
            for step in 0..<300 {
                // Every few steps, a second Store on the same file commits, so the first one's cached
                // head goes stale and must be reloaded.
                let writer = step % 7 == 3 ? try Store(path: path) : store
                let sections = listSections(current)
                let result = try writer.commit(sections, to: "random", expectedVersion: committed.count - 1)
                if result.changed {
                    committed.append(sections)
                    digests.append(result.digest)
                    #expect(result.version == committed.count - 1)
                    #expect(result.digest == ListDigest.of(sections))
                } else {
                    #expect(sections == committed.last!)
                }
                current = random.edit(current, intensity: Double(step % 10) / 12)
                if step % 50 == 49 { current = random.snapshot(maxSections: 6, maxElements: 10) }
            }
        }
        #expect(committed.count > 200)

        // A fresh store value (no cache) reads the journal back and replays it to every snapshot.
        let store = try Store(path: path)
        var replica: [ListSection] = []
        var version = 0
        var page: JournalPage
        repeat {
            page = try store.journal(of: "random", after: version, limit: 37)
            for entry in page.entries {
                #expect(entry.version == version + 1 && entry.parentVersion == version)
                let (changeset, next) = try entry.changeset(applyingTo: replica)
                #expect(!changeset.isEmpty)
                replica = next
                version = entry.version
                #expect(replica == committed[version], "replay differs at version \(version)")
                #expect(entry.digest == digests[version])
                #expect(ListDigest.of(replica) == entry.digest)
                #expect(entry.elementCount == replica.reduce(0) { $0 + $1.elements.count })
            }
        } while page.hasMore
        #expect(version == committed.count - 1)

        // Time travel.
        for v in stride(from: 0, to: committed.count, by: 23) {
            let snapshot = try store.snapshot(of: "random", at: v)
            #expect(snapshot.sections == committed[v])
            #expect(snapshot.digest == digests[v])
        }
        let head = try store.snapshot(of: "random")
        #expect(head.sections == committed.last!)
        #expect(head.version == committed.count - 1)
    }

    @Test func equalSnapshotCreatesNoVersion() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        let first = try store.commit(linearList(3), to: "l")
        #expect(first.changed && first.version == 1 && first.parentVersion == 0)
        let second = try store.commit(linearList(3), to: "l")
        #expect(!second.changed && second.version == 1 && second.rowsWritten == 0)
        #expect(try store.journal(of: "l").entries.count == 1)
    }

    @Test func commitAfterConcurrentWriteReportsConflict() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("s.liststore")
        let ana = try Store(path: path)
        let bo = try Store(path: path)
        try ana.commit(linearList(3), to: "l", expectedVersion: 0)
        try bo.commit(linearList(4), to: "l", expectedVersion: 1)
        #expect {
            try ana.commit(linearList(5), to: "l", expectedVersion: 1)
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .versionConflict && error.expectedVersion == 1 && error.currentVersion == 2
        }
        #expect(try ana.snapshot(of: "l").sections == linearList(4))
        // Without an expected version, the commit diffs against whatever the head is.
        let result = try ana.commit(linearList(5), to: "l")
        #expect(result.version == 3 && result.changeCount == 1)
    }

    @Test func insertingAtTheFrontOfALongListWritesAFewRows() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        var list = linearList(20_000)
        let first = try store.commit(list, to: "long")
        #expect(first.rowsWritten >= 20_000)
        for k in 0..<20 {
            list[0].elements.insert(ListItem("front\(k)", k), at: 0)
            let result = try store.commit(list, to: "long")
            // One element row, the journal row, the list row.
            #expect(result.rowsWritten == 3)
        }
        // Inserting again and again between the same two neighbours spreads a few neighbours now and
        // then, never the list.
        var total = 0
        for k in 0..<100 {
            list[0].elements.insert(ListItem("middle\(k)", k), at: 10_000)
            total += try store.commit(list, to: "long").rowsWritten
        }
        #expect(total < 100 * 6)
        let reopened = try Store(path: directory.file("s.liststore"))
        #expect(try reopened.snapshot(of: "long").sections == list)
    }

    @Test func contentMustBeCanonicalJSON() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("s.liststore")
        let store = try Store(path: path)
        try store.commit(linearList(2), to: "l")
        for bad in ["{\"b\":1, \"a\":2}", "{\"b\":1,\"a\":2}", "not json", "", "1 "] {
            var list = linearList(2)
            list[0].elements.append(ListItem(id: "x", content: Array(bad.utf8)))
            #expect {
                try store.commit(list, to: "l")
            } throws: { error in
                (error as? StoreError)?.code == .invalidSnapshot
                    && "\(error)".hasPrefix("sections[0].elements[2].content")
            }
        }
        #expect(try store.snapshot(of: "l").version == 1)
        #expect(try store.journal(of: "l").entries.count == 1)
    }

    /// New sections are checked apart from the rest (they are written while the elements are
    /// diffed); the error still names the first bad content in document order, and nothing is written.
    @Test func theFirstBadContentIsNamedAcrossNewSectionsAndChangedElements() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        let base = [
            ListSection(model: ListItem("a"), elements: [ListItem("x"), ListItem("y")]),
            ListSection(model: ListItem("b"), elements: [ListItem("z")]),
        ]
        try store.commit(base, to: "l")
        let bad = ListItem(id: "bad", content: Array("{\"b\":1, \"a\":2}".utf8))
        let fresh = (0..<5_000).map { ListItem("n\($0)", $0) }

        // A bad element in a new section after a changed, bad element of a kept one.
        var list = base
        list[1].elements[0] = ListItem(id: "z", content: Array("01".utf8))
        list.append(ListSection(model: ListItem("c"), elements: fresh + [bad]))
        #expect { try store.commit(list, to: "l") } throws: { "\($0)".hasPrefix("sections[1].elements[0].content") }

        // A bad element in a new section before a changed, bad element of a kept one.
        list = base
        list[1].elements[0] = ListItem(id: "z", content: Array("01".utf8))
        list.insert(ListSection(model: ListItem("c"), elements: fresh + [bad]), at: 0)
        #expect { try store.commit(list, to: "l") } throws: { "\($0)".hasPrefix("sections[0].elements[5000].content") }

        // A bad section content comes before any element.
        list = base
        list.append(ListSection(model: bad, elements: fresh))
        list[0].elements.append(bad)
        #expect { try store.commit(list, to: "l") } throws: { "\($0)".hasPrefix("sections[2].content") }

        #expect(try store.snapshot(of: "l").version == 1)
        #expect(try store.verify(list: "l").isValid)
    }

    /// Deleting the newest section while inserting new ones in the same commit: the new sections'
    /// rows and elements stay apart from every other section's.
    @Test func newSectionsReplaceDeletedOnesWithoutMixingRows() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("s.liststore")
        let store = try Store(path: path)
        var list = [ListSection]()
        for round in 0..<6 {
            if !list.isEmpty { list.removeLast() }
            for k in 0..<2 {
                let id = "r\(round)s\(k)"
                list.append(ListSection(model: ListItem(id), elements: (0..<50).map { ListItem("\(id)e\($0)", $0) }))
            }
            try store.commit(list, to: "l")
            #expect(try Store(path: path).snapshot(of: "l").sections == list)
        }
        #expect(try store.verify(list: "l").isValid)
    }

    /// After `checkpoint()`, the store file alone holds every version: a copy of just that file
    /// (without its log) reads the same.
    @Test func checkpointLeavesEverythingInTheStoreFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("s.liststore")
        let store = try Store(path: path)
        var list = linearList(3_000)
        try store.commit(list, to: "l")
        list[0].elements.removeFirst(10)
        list[0].elements.append(ListItem("tail"))
        try store.commit(list, to: "l")
        try store.checkpoint()
        let copy = directory.file("copy.liststore")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let copied = try Store(path: copy)
        #expect(try copied.snapshot(of: "l").sections == list)
        #expect(try copied.snapshot(of: "l", at: 1).sections == linearList(3_000))
        #expect(try copied.verify().isValid)
        #expect(throws: StoreError.self) { try Store(path: directory.file("missing.liststore")).checkpoint() }
    }

    /// A commit that grows the log past 4 MiB starts a background checkpoint; `checkpoint()` right
    /// after it waits for that one instead of failing with "database is locked".
    @Test func checkpointWaitsForTheBackgroundOne() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        for round in 0..<3 {
            try store.commit(linearList(80_000, prefix: "r\(round)-"), to: "l")
            try store.checkpoint()
        }
        #expect(try store.snapshot(of: "l").sections == linearList(80_000, prefix: "r2-"))
    }

    @Test func readsNeverCreateTheStore() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("missing.liststore")
        let store = try Store(path: path)
        #expect(!store.exists)
        #expect(throws: StoreError.self) { try store.lists() }
        #expect(throws: StoreError.self) { try store.snapshot(of: "l") }
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
