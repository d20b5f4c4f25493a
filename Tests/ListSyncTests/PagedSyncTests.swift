import Foundation
import GRDB
import ListDiff
import ListDiffTestSupport
@_spi(Replication) import ListStore
import ListStoreTestSupport
@_spi(Replication) import ListSync
import Testing

/// First syncs and resyncs in pages (ListStoreCore's article "Lists of Any Size"): pages read at one
/// version, landed one transaction each, made the replica in one, resumed after an interruption.
/// In-memory stores run their transactions on the threads that run tasks: the bodies run on threads
/// of their own (`.heavyWork`).
@Suite(.heavyWork) struct PagedSyncTests {
    /// A list of `sections` sections of `elements` elements each, contents of some size.
    static func bigList(sections: Int, elements: Int, tag: String = "") -> [ListSection] {
        (0..<sections).map { s in
            ListSection(
                model: ListItem(id: "s\(s)", json: ["title": "section \(s)\(tag)"]),
                elements: (0..<elements).map { e in
                    ListItem(id: "m\(s)-\(e)", json: ["title": "Message number \(e) from someone\(tag)", "n": .number(JSONNumber(e)), "read": false])
                })
        }
    }

    /// Runs `body`, expecting it to throw `StoreError` of `code`.
    static func expectCode(_ code: StoreError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> some Any) async {
        do {
            _ = try await body()
            Issue.record("expected \(code)", sourceLocation: sourceLocation)
        } catch let error as StoreError {
            #expect(error.code == code, sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
        }
    }

    /// The pages of a list, read one after another at `maxBytes`.
    static func readPages(_ store: any ListStoreEngine, _ list: String, maxBytes: Int) async throws -> [ListPage] {
        var pages: [ListPage] = []
        repeat {
            pages.append(try await store.page(of: list, at: pages.last?.version, after: pages.last?.next, maxBytes: maxBytes))
        } while pages.last?.next != nil
        return pages
    }

    /// The sections of pages' records, in order.
    static func sections(of pages: [ListPage]) -> [ListSection] {
        var sections: [ListSection] = []
        for record in pages.flatMap(\.records) {
            if record.isSection { sections.append(ListSection(model: record.item, elements: [])) } else { sections[sections.count - 1].elements.append(record.item) }
        }
        return sections
    }

    @Test(arguments: [false, true]) func pagesCoverTheHeadAtOneVersionWithinTheirBound(onDisk: Bool) async throws {
        let directory = try TemporaryDirectory()
        let store: any ListStoreEngine = onDisk ? try Store(path: directory.file("s.liststore")) : InMemoryStore()
        var random = RandomSnapshots(seed: 0xBA6E5, duplicates: false)
        for round in 0..<30 {
            let sections = listSections(random.snapshot(maxSections: 6, maxElements: 12)) + (round % 5 == 0 ? [ListSection(model: ListItem(id: "empty"), elements: [])] : [])
            try await store.commit(sections, to: "l", expectedVersion: nil, author: nil, message: nil)
            let maxBytes = 40 + round * 25
            let pages = try await Self.readPages(store, "l", maxBytes: maxBytes)
            let head = try await store.snapshot(of: "l", at: nil)
            #expect(Self.sections(of: pages) == head.sections)
            #expect(ListDigest.of(Self.sections(of: pages)) == pages[0].digest)
            for page in pages {
                #expect(page.version == head.version && page.digest == head.digest)
                #expect(page.sectionCount == head.sections.count)
                #expect(page.elementCount == head.sections.reduce(0) { $0 + $1.elements.count })
                #expect(page.records.count == 1 || page.size <= maxBytes)
            }
            #expect(zip(pages.dropFirst(), pages).allSatisfy { $0.after == $1.next })
        }
    }

    /// Commits to eight other lists and reads their first pages: the versions `store` keeps for
    /// paged reads before are let go (it keeps eight, the least recently used going first).
    static func crowdOutPins(_ store: InMemoryStore) async throws {
        let round = UUID().uuidString
        for k in 0..<8 {
            try await store.commit(bigList(sections: 2, elements: 20, tag: round), to: "crowd\(k)", expectedVersion: nil, author: nil, message: nil)
            #expect(try await store.page(of: "crowd\(k)", at: nil, after: nil, maxBytes: 300).next != nil)
        }
    }

    @Test func pagesStayAtTheirVersionWhileCommitsLandUntilTheVersionIsLetGo() async throws {
        let store = InMemoryStore()
        let sections = Self.bigList(sections: 3, elements: 20)
        try await store.commit(sections, to: "l", expectedVersion: nil, author: nil, message: nil)
        let first = try await store.page(of: "l", at: nil, after: nil, maxBytes: 500)
        #expect(first.next != nil)
        try await store.commit(Self.bigList(sections: 3, elements: 21), to: "l", expectedVersion: nil, author: nil, message: nil)
        // The version read stays: its pages make the list it was.
        var pages = [first]
        while let next = pages.last?.next { pages.append(try await store.page(of: "l", at: first.version, after: next, maxBytes: 500)) }
        #expect(Self.sections(of: pages) == sections && pages.allSatisfy { $0.version == first.version })
        // Once let go, the next page of it is refused: the read starts again at the head.
        try await Self.crowdOutPins(store)
        await Self.expectCode(.versionNotFound) { try await store.page(of: "l", at: first.version, after: first.next, maxBytes: 500) }
        await Self.expectCode(.invalidArgument) { try await store.page(of: "l", at: 2, after: ListPage.Cursor("x.y"), maxBytes: 500) }
        // A cursor at no record of the head is of another version; without a version, a page is the head's.
        await Self.expectCode(.versionNotFound) { try await store.page(of: "l", at: 2, after: ListPage.Cursor("99.5"), maxBytes: 500) }
        #expect(try await store.page(of: "l", at: nil, after: first.next, maxBytes: 500).version == 2)
    }

    /// A list deleted while it is being read is not read from the state pinned for it: a page of
    /// its version, the first or the next, is `listNotFound`, as everything else about it (the
    /// API's contract test found a first page of a pinned version answered after the DELETE).
    @Test func aListDeletedWhileItIsReadIsNotReadFromItsPin() async throws {
        let store = InMemoryStore()
        try await store.commit(Self.bigList(sections: 3, elements: 20), to: "l", expectedVersion: nil, author: nil, message: nil)
        let first = try await store.page(of: "l", at: nil, after: nil, maxBytes: 500)
        #expect(first.next != nil)
        #expect(try await store.page(of: "l", at: first.version, after: first.next, maxBytes: 500).listID == first.listID)
        _ = try await store.deleteList("l", discardingPending: true)
        await Self.expectCode(.listNotFound) { try await store.page(of: "l", at: first.version, after: nil, maxBytes: 500) }
        await Self.expectCode(.listNotFound) { try await store.page(of: "l", at: first.version, after: first.next, maxBytes: 500) }
    }

    /// A list deleted and made again up to the same version while the one before is being read:
    /// a new read gets the new list's pages, never the kept ones of the list before, and a reader
    /// of that one meets another list identity (which a replica refuses).
    @Test func aListMadeAgainToTheSameVersionIsNotReadFromThePinOfTheOneBefore() async throws {
        let store = InMemoryStore()
        let (old, new) = (Self.bigList(sections: 3, elements: 20), Self.bigList(sections: 3, elements: 20, tag: " again"))
        try await store.commit(old, to: "l", expectedVersion: nil, author: nil, message: nil)
        let before = try await store.page(of: "l", at: nil, after: nil, maxBytes: 500)
        _ = try await store.deleteList("l", discardingPending: true)
        try await store.commit(new, to: "l", expectedVersion: nil, author: nil, message: nil)
        var pages = [try await store.page(of: "l", at: nil, after: nil, maxBytes: 500)]
        #expect(pages[0].version == before.version && pages[0].listID != before.listID)
        while let next = pages.last?.next { pages.append(try await store.page(of: "l", at: pages[0].version, after: next, maxBytes: 500)) }
        #expect(Self.sections(of: pages) == new && pages.allSatisfy { $0.listID == pages[0].listID })
        #expect(try await store.page(of: "l", at: before.version, after: before.next, maxBytes: 500).listID != before.listID)
    }

    /// A source that commits to its list after every page it hands out: a list committed to more
    /// often than a copy takes.
    struct CommittingEveryPage: _ForwardingSource {
        let base: any ListSource
        let store: InMemoryStore
        let commits = _Locked(0)
        func page(of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int) async throws -> ListPage {
            let page = try await base.page(of: list, at: version, after: cursor, maxBytes: maxBytes)
            let n = commits.withLock { $0 += 1; return $0 }
            try await store.commit(PagedSyncTests.bigList(sections: 4, elements: 30, tag: " \(n)"), to: list, expectedVersion: nil, author: nil, message: nil)
            return page
        }
    }

    @Test func aFirstSyncOfAListCommittedToBetweenEveryPageEndsAtItsVersionThenFollows() async throws {
        let source = InMemoryStore()
        let sections = Self.bigList(sections: 4, elements: 30)
        try await source.commit(sections, to: "l", expectedVersion: nil, author: nil, message: nil)
        _ = try await source.prune("l", .keepLast(0), force: false)
        let replica = Replica(store: InMemoryStore(), list: "l")
        var options = ReplicaPullOptions()
        options.pageBytes = 700
        let committing = CommittingEveryPage(base: LocalSource(source), store: source)
        let result = try await replica.pull(from: committing, options: options)
        #expect(result.resynced && result.pages?.restarted == false && (result.pages?.pages ?? 0) > 5)
        // The copy was of version 1; the pull then applied the commits made meanwhile.
        let head = try await source.snapshot(of: "l", at: nil)
        #expect(committing.commits.withLock { $0 } >= 5 && result.version == head.version)
        #expect(try await replica.store.snapshot(of: "l", at: nil).sections == head.sections)
        #expect(try await replica.store.snapshot(of: "l", at: 1).sections == sections)
    }

    @Test func aJournalEntryLargerThanTheReadersBoundIsNamedNotRead() async throws {
        let store = InMemoryStore()
        try await store.commit(Self.bigList(sections: 1, elements: 2), to: "l", expectedVersion: nil, author: nil, message: nil)
        try await store.commit(Self.bigList(sections: 4, elements: 200), to: "l", expectedVersion: nil, author: nil, message: nil)
        let first = try await store.journal(of: "l", after: 0, limit: 10, maxBytes: 10_000, maxEntryBytes: 10_000)
        #expect(first.entries.map(\.version) == [1] && first.hasMore && first.tooLarge == nil)
        let large = try await store.journal(of: "l", after: 1, limit: 10, maxBytes: 10_000, maxEntryBytes: 10_000)
        #expect(large.entries.isEmpty && large.hasMore)
        #expect(large.tooLarge?.version == 2 && (large.tooLarge?.bytes ?? 0) > 10_000)
        // Without a bound on entries, the page still holds at least one.
        #expect(try await store.journal(of: "l", after: 1, limit: 10, maxBytes: 10_000).entries.map(\.version) == [2])
    }

    /// A source whose page requests fail after `pagesLeft` of them, as a connection lost midway.
    final class Interrupting: _ForwardingSource, @unchecked Sendable {
        let base: any ListSource
        let pagesLeft: _Locked<Int>
        let pagesServed = _Locked(0)
        init(_ base: any ListSource, pages: Int) {
            self.base = base
            pagesLeft = _Locked(pages)
        }
        func page(of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int) async throws -> ListPage {
            guard pagesLeft.withLock({ left in defer { left -= 1 }; return left > 0 }) else {
                throw SyncError.transport("the connection was lost", transient: true)
            }
            pagesServed.withLock { $0 += 1 }
            return try await base.page(of: list, at: version, after: cursor, maxBytes: maxBytes)
        }
    }

    @Test func aFirstSyncOfAPrunedSourceGoesInPagesWithProgressAndResumesAfterAnInterruption() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        let sections = Self.bigList(sections: 5, elements: 40)
        try await source.commit(sections, to: "l")
        try await source.commit(Self.bigList(sections: 5, elements: 41), to: "l")
        _ = try await source.prune("l", .keepLast(0))
        let replica = Replica(store: try Store(path: directory.file("replica.liststore")), list: "l")
        var options = ReplicaPullOptions()
        options.pageBytes = 1000
        let reports = _Locked<[SyncProgress]>([])
        options.onProgress = { progress in reports.withLock { $0.append(progress) } }
        // Lost after 4 pages: nothing is the replica yet, and the pages landed stay.
        let interrupting = Interrupting(LocalSource(source), pages: 4)
        await #expect(throws: SyncError.self) { try await replica.pull(from: interrupting, options: options) }
        #expect(try await replica.store.replicaHead(of: "l") == nil)
        #expect(try await replica.store.stagedSync(of: "l")?.records ?? 0 > 0)
        #expect(try await replica.store.lists().isEmpty)
        #expect(try await replica.store.verify().isValid)
        #expect(reports.withLock { $0.count } == 4)
        // The next pull goes on from there.
        let counting = Interrupting(LocalSource(source), pages: .max)
        let result = try await replica.pull(from: counting, options: options)
        let head = try await source.snapshot(of: "l")
        #expect(try await replica.store.snapshot(of: "l").sections == head.sections)
        #expect(result.resynced && result.reason == ResyncReason.pruned && result.version == head.version)
        #expect(result.pages?.resumed == true && result.pages?.restarted == false)
        let all = reports.withLock { $0 }
        #expect(result.pages?.pages == counting.pagesServed.withLock { $0 })
        #expect(all.count == 4 + (result.pages?.pages ?? 0))
        #expect(zip(all.dropFirst(), all).allSatisfy { $0.records > $1.records })
        #expect(all.last?.fractionCompleted == 1 && all.last?.elements == head.sections.reduce(0) { $0 + $1.elements.count })
        #expect(all.allSatisfy { $0.resumed == ($0.records > all[3].records) })
        #expect(try await replica.store.stagedSync(of: "l") == nil)
        #expect(try await replica.store.verify().isValid)
    }

    /// A resync into a replica list whose head is empty: the pages land as rows of a staging list
    /// that no listing shows, and the last transaction gives its sections to the list's own row.
    @Test(arguments: [false, true]) func aResyncIntoAnEmptyListKeepsItsRowAndNoListingShowsTheStagingList(onDisk: Bool) async throws {
        let directory = try TemporaryDirectory()
        if onDisk {
            try await Self.resyncIntoAnEmptyList(try Store(path: directory.file("source.liststore")), Replica(store: try Store(path: directory.file("replica.liststore")), list: "l"))
        } else {
            try await Self.resyncIntoAnEmptyList(InMemoryStore(), Replica(store: InMemoryStore(), list: "l"))
        }
    }

    static func resyncIntoAnEmptyList<S: ReplicaStore>(_ source: some ListStoreEngine, _ replica: Replica<S>) async throws {
        try await source.commit(Self.bigList(sections: 1, elements: 1), to: "l", expectedVersion: nil, author: nil, message: nil)
        try await source.commit([], to: "l", expectedVersion: nil, author: nil, message: nil)
        try await replica.pull(from: LocalSource(source))
        let before = try await replica.store.summary(of: "l")
        #expect(before.sectionCount == 0)
        try await source.commit(Self.bigList(sections: 4, elements: 30), to: "l", expectedVersion: nil, author: nil, message: nil)
        _ = try await source.prune("l", .keepLast(0), force: false)
        var options = ReplicaPullOptions()
        options.pageBytes = 800
        await #expect(throws: SyncError.self) { try await replica.pull(from: Interrupting(LocalSource(source), pages: 3), options: options) }
        // Pages have landed; the list is still the empty one, and the only one listed.
        #expect(try await replica.store.stagedSync(of: "l")?.records ?? 0 > 0)
        #expect(try await replica.store.lists().map(\.name) == ["l"])
        #expect(try await replica.store.summary(of: "l").sectionCount == 0)
        #expect(try await replica.store.verify(list: nil, progress: nil).isValid)
        // No read finds the staging list by its name.
        await Self.expectCode(.listNotFound) { try await replica.store.snapshot(of: _Names.staging("l"), at: nil) }
        let result = try await replica.pull(from: LocalSource(source), options: options)
        #expect(result.resynced && result.pages?.resumed == true)
        #expect(try await replica.store.snapshot(of: "l", at: nil).sections == source.snapshot(of: "l", at: nil).sections)
        #expect(try await replica.store.summary(of: "l").id == before.id)
        #expect(try await replica.store.lists().map(\.name) == ["l"])
        #expect(try await replica.store.stagedSync(of: "l") == nil)
        #expect(try await replica.store.verify(list: nil, progress: nil).isValid)
    }

    /// A sync dropped (a refused page, a digest that misses, a resync under local changes) leaves
    /// none of its pages' rows behind.
    @Test func aDroppedSyncLeavesNoRowsBehind() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        try await source.commit(Self.bigList(sections: 4, elements: 30), to: "l")
        _ = try await source.prune("l", .keepLast(0))
        let path = directory.file("replica.liststore")
        let replica = Replica(store: try Store(path: path), list: "l")
        var options = ReplicaPullOptions()
        options.pageBytes = 800
        await #expect(throws: SyncError.self) { try await replica.pull(from: Interrupting(LocalSource(source), pages: 3), options: options) }
        func rows() throws -> [Int] {
            try DatabaseQueue(path: path).read { db in
                try ["list", "section", "element"].map { try Int.fetchOne(db, sql: "SELECT count(*) FROM \($0)") ?? -1 }
            }
        }
        #expect(try rows().allSatisfy { $0 > 0 })
        try await replica.store.dropStagedSync(of: "l")
        #expect(try rows() == [0, 0, 0])
        #expect(try await replica.store.stagedSync(of: "l") == nil)
        #expect(try await replica.store.stagedSections(of: "l").isEmpty)
        // The next pull starts anew and ends equal to the source.
        let result = try await replica.pull(from: LocalSource(source), options: options)
        #expect(result.pages?.resumed == false)
        #expect(try await replica.store.snapshot(of: "l").sections == source.snapshot(of: "l").sections)
    }

    @Test func aSyncWhoseVersionIsGoneStartsAgainAtTheHeadAndSaysSo() async throws {
        let source = InMemoryStore()
        try await source.commit(Self.bigList(sections: 4, elements: 30), to: "l", expectedVersion: nil, author: nil, message: nil)
        _ = try await source.prune("l", .keepLast(0), force: false)
        let replica = Replica(store: InMemoryStore(), list: "l")
        var options = ReplicaPullOptions()
        options.pageBytes = 800
        await #expect(throws: SyncError.self) { try await replica.pull(from: Interrupting(LocalSource(source), pages: 2), options: options) }
        try await source.commit(Self.bigList(sections: 4, elements: 30, tag: "!"), to: "l", expectedVersion: nil, author: nil, message: nil)
        try await Self.crowdOutPins(source)
        let result = try await replica.pull(from: LocalSource(source), options: options)
        #expect(result.pages?.restarted == true)
        #expect(try await replica.store.snapshot(of: "l", at: nil).sections == source.snapshot(of: "l", at: nil).sections)
    }

    /// A source that hands out a page of another version, one that skips ahead, or a last page cut short.
    struct Tampering: _ForwardingSource {
        enum Fault: CaseIterable { case otherVersion, skipping, cutShort, otherStore, notCanonical, otherContent }
        let base: any ListSource
        let fault: Fault
        func page(of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int) async throws -> ListPage {
            var page = try await base.page(of: list, at: version, after: cursor, maxBytes: maxBytes)
            guard cursor != nil else { return page }
            switch fault {
            case .otherVersion: page.version += 1
            case .skipping: if let next = page.next { page = try await base.page(of: list, at: version, after: next, maxBytes: maxBytes); page.after = cursor }
            case .cutShort: page.records.removeLast(); page.next = nil
            case .otherStore: page.store = StoreIdentity(uuid: UUID().uuidString.lowercased(), epoch: 1)
            case .notCanonical: page.records[page.records.count - 1].item.content = Array(#"{ "title": "spaced" }"#.utf8)
            case .otherContent: page.records[page.records.count - 1].item.content = Array(#"{"title":"not the source's"}"#.utf8)
            }
            return page
        }
    }

    @Test(arguments: Tampering.Fault.allCases) func aPageThatDoesNotFollowIsRefusedAndNothingIsHalfApplied(fault: Tampering.Fault) async throws {
        let source = InMemoryStore()
        try await source.commit(Self.bigList(sections: 3, elements: 30), to: "l", expectedVersion: nil, author: nil, message: nil)
        _ = try await source.prune("l", .keepLast(0), force: false)
        let replica = Replica(store: InMemoryStore(), list: "l")
        // A replica with a head of its own first: a refused page leaves it as it was.
        try await replica.pull(from: LocalSource(source))
        let before = try await replica.store.snapshot(of: "l", at: nil)
        try await source.commit(Self.bigList(sections: 3, elements: 31), to: "l", expectedVersion: nil, author: nil, message: nil)
        _ = try await source.prune("l", .keepLast(0), force: false)
        var options = ReplicaPullOptions()
        options.pageBytes = 600
        await #expect(throws: (any Error).self) { try await replica.pull(from: Tampering(base: LocalSource(source), fault: fault), options: options) }
        #expect(try await replica.store.snapshot(of: "l", at: nil) == before)
        // An honest source then brings it to the head.
        try await replica.pull(from: LocalSource(source), options: options)
        #expect(try await replica.store.snapshot(of: "l", at: nil).sections == source.snapshot(of: "l", at: nil).sections)

        // A first sync (into no head, written as the runs of records are read) keeps nothing either.
        let first = Replica(store: InMemoryStore(), list: "l")
        await #expect(throws: (any Error).self) { try await first.pull(from: Tampering(base: LocalSource(source), fault: fault), options: options) }
        #expect(try await first.store.lists().isEmpty)
        try await first.pull(from: LocalSource(source), options: options)
        #expect(try await first.store.snapshot(of: "l", at: nil).sections == source.snapshot(of: "l", at: nil).sections)
    }

    /// A first sync interrupted at random pages while the source commits and prunes at random: the
    /// replica is never a half list (it is its last complete version, or nothing), and ends equal to
    /// the source.
    @Test func firstSyncsKilledAtRandomPointsEndEqualToTheSource() async throws {
        var rng = SplitMix64(seed: 0xF1257)
        var random = RandomSnapshots(seed: 0x9A6E, duplicates: false)
        var (resumed, restarted) = (0, 0)
        for _ in 0..<150 {
            let source = InMemoryStore()
            var current = random.snapshot(maxSections: 6, maxElements: 14)
            while listSections(current).isEmpty { current = random.snapshot(maxSections: 6, maxElements: 14) }
            try await source.commit(listSections(current), to: "l", expectedVersion: nil, author: nil, message: nil)
            _ = try await source.prune("l", .keepLast(0), force: false)
            let replica = Replica(store: InMemoryStore(), list: "l")
            var options = ReplicaPullOptions()
            options.pageBytes = 60 + Int(rng.next() % 400)
            var versions = [listSections(current)]
            for _ in 0..<12 {
                do {
                    let result = try await replica.pull(from: Interrupting(LocalSource(source), pages: Int(rng.next() % 4)), options: options)
                    if result.pages?.resumed == true { resumed += 1 }
                    if result.pages?.restarted == true { restarted += 1 }
                } catch let error as SyncError where error.isTransient {
                } catch {
                    Issue.record("\(error)")
                    return
                }
                // Nothing, or a whole version the source had: never a half list.
                if let head = try? await replica.store.snapshot(of: "l", at: nil) {
                    #expect(versions.contains(head.sections))
                }
                if rng.next() % 3 == 0 {
                    current = random.edit(current, intensity: 0.3)
                    try await source.commit(listSections(current), to: "l", expectedVersion: nil, author: nil, message: nil)
                    versions.append(listSections(current))
                    if rng.next() % 2 == 0 { _ = try await source.prune("l", .keepLast(0), force: false) }
                    // The version being copied stays while the source keeps it for paged reads.
                    if rng.next() % 2 == 0 { try await Self.crowdOutPins(source) }
                }
            }
            // A copy ends at the version it started at (kept for it); when the source's journal
            // after it is pruned, the next pull copies the head.
            let head = try await source.snapshot(of: "l", at: nil)
            var pulls = 0
            repeat {
                pulls += 1
                try await replica.pull(from: LocalSource(source), options: options)
            } while try await replica.store.replicaSource(of: "l")?.version != head.version && pulls < 2
            #expect(try await replica.store.snapshot(of: "l", at: nil).sections == head.sections)
            #expect(try await replica.store.stagedSync(of: "l") == nil)
        }
        #expect(resumed > 20 && restarted > 5)
    }
}
