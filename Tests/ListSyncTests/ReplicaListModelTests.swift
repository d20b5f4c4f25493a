import Foundation
import ListDiff
import ListDiffTestSupport
import ListStore
import ListStoreTestSupport
import ListSync
import Observation
import Testing

/// The model needs the Observation framework: macOS 14, iOS 17 and later on Apple platforms.
@Suite @MainActor struct ReplicaListModelTests {
    /// A source holding `start`, a replica that pulled it, and a model of the replica syncing with the
    /// source (or with `modelSource`).
    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    func setUp(
        _ directory: TemporaryDirectory, _ start: [(String, [String])], modelSource: (any ListSource)? = nil
    ) async throws -> (Store, ReplicaListModel) {
        let source = try Store(path: directory.file("source.liststore"))
        try await source.commit(sections(start), to: "l")
        let replica = Replica(store: try Store(path: directory.file("replica.liststore")), list: "l")
        try await replica.pull(from: LocalSource(source))
        let model = ReplicaListModel(replica: replica, source: modelSource ?? LocalSource(source))
        await model.refresh()
        return (source, model)
    }

    /// A background sync that retries quickly.
    let quickRetry = RetryPolicy(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(100))

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func theModelStartsAtTheReplicasHead() async throws {
        let directory = try TemporaryDirectory()
        let (_, model) = try await setUp(directory, [("s", ["a", "b"])])
        #expect(layout(model.sections) == [["s", "a", "b"]])
        #expect(model.version == 1)
        #expect(model.status.confirmedVersion == 1 && model.status.pending == 0 && !model.status.hasLocalChanges)
        #expect(!model.status.isFollowing && !model.status.isSyncing && model.status.lastError == nil)
        #expect(model.status.isLoaded && model.status.lastSync == nil)
        // A replica that never pulled shows an empty list.
        let fresh = ReplicaListModel(
            replica: Replica(store: try Store(path: directory.file("new.liststore")), list: "l"), source: model.source)
        await fresh.refresh()
        #expect(fresh.sections.isEmpty && fresh.version == 0 && fresh.status.confirmedVersion == nil && fresh.status.isLoaded)
    }

    /// The head is read off the main actor after `init`, which returns at once with an empty list;
    /// the head comes in as one `.loaded` transition.
    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func aNewModelReadsTheHeadInTheBackgroundAndPublishesItAsLoaded() async throws {
        let directory = try TemporaryDirectory()
        let (source, first) = try await setUp(directory, [("s", ["a", "b"]), ("t", ["c"])])
        let model = ReplicaListModel(replica: first.replica, source: LocalSource(source))
        // In the same main-actor turn as `init`: nothing read yet.
        #expect(model.sections.isEmpty && model.version == 0 && !model.status.isLoaded)
        var transitions = model.transitions().makeAsyncIterator()
        let loaded = try #require(await transitions.next())
        #expect(loaded.cause == .loaded && loaded.fromVersion == 0 && loaded.toVersion == 1)
        #expect(layout(loaded.sections) == [["s", "a", "b"], ["t", "c"]] && model.sections == loaded.sections)
        #expect(throws: Never.self) { try BatchUpdateValidator.validate(loaded.changeset, source: [], target: loaded.sections) }
        #expect(model.status.isLoaded && model.status.confirmedVersion == 1)
    }

    /// A sync that changes nothing is still a change of the model's status (`lastSync`), which
    /// SwiftUI observes.
    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func everySuccessfulSyncChangesTheObservedStatus() async throws {
        let directory = try TemporaryDirectory()
        let (_, model) = try await setUp(directory, [("s", ["a"])])
        var previous = model.status.lastSync
        for _ in 0..<3 {
            let observed = _Locked(false)
            withObservationTracking { _ = model.status } onChange: { observed.withLock { $0 = true } }
            let result = try #require(await model.sync())
            #expect(result.push.pushed == 0 && result.pull.applied == 0)
            #expect(observed.withLock { $0 })
            let now = try #require(model.status.lastSync)
            #expect(previous.map { $0 <= now } ?? true)
            previous = now
        }
        #expect(model.version == 1 && model.status.lastError == nil)
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func aLocalEditUpdatesSectionsAtOnceAndPublishesItsChangeset() async throws {
        let directory = try TemporaryDirectory()
        let (_, model) = try await setUp(directory, [("s", ["a", "b", "c"]), ("t", ["d"])])
        let recorder = TransitionRecorder(model)
        let before = model.sections
        let result = try await model.edit(author: "ana") { draft in
            try draft.moveElement("c", to: ElementPath(section: 1, element: 0))
            try draft.reloadElement(ListItem(id: "a", json: ["v": "edited"]))
            draft.appendSection(ListItem(id: "u", json: ["v": "u"]), elements: [ListItem(id: "e", json: ["v": "e"])])
        }
        // At once: no await between the edit and these.
        #expect(layout(model.sections) == [["s", "a", "b"], ["t", "c", "d"], ["u", "e"]])
        #expect(model.sections[0].elements[0] == ListItem(id: "a", json: ["v": "edited"]))
        #expect(model.sections == (try await model.replica.store.snapshot(of: "l").sections))
        #expect(result.changed && result.pendingSeq == 1 && model.version == result.version && result.version == 2)
        #expect(model.status.pending == 1 && model.status.hasLocalChanges)
        #expect(try await model.replica.status()?.pending == 1)

        let transitions = try await recorder.first(1)
        let transition = transitions[0]
        #expect(transition.cause == .localEdit && transition.fromVersion == 1 && transition.toVersion == 2)
        #expect(transition.changeset == result.changeset && transition.sections == model.sections)
        #expect(throws: Never.self) { try BatchUpdateValidator.validate(transition.changeset, source: before, target: model.sections) }
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func aFailedEditChangesNothingAndPublishesNothing() async throws {
        let directory = try TemporaryDirectory()
        let (_, model) = try await setUp(directory, [("s", ["a"])])
        let recorder = TransitionRecorder(model)
        await #expect(throws: StoreError.self) {
            try await model.edit { draft in
                draft.sections[0].elements.append(ListItem(id: "b"))
                try draft.removeElement("missing")
            }
        }
        #expect(layout(model.sections) == [["s", "a"]] && model.version == 1 && model.status.pending == 0)
        // An edit that changes nothing commits nothing either.
        #expect(try await model.edit { _ in }.changed == false)
        #expect(try await model.commit(model.sections).changed == false)
        try await model.commit(sections([("s", ["a", "c"])]), message: "c")
        #expect(layout(model.sections) == [["s", "a", "c"]] && model.status.pending == 1)
        let transitions = try await recorder.first(1)
        #expect(transitions.count == 1 && transitions[0].toVersion == 2)
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test(.timeLimit(.minutes(1))) func theTransitionsEndWhenTheModelGoesAway() async throws {
        let directory = try TemporaryDirectory()
        var (_, model): (Store, ReplicaListModel?) = try await setUp(directory, [("s", ["a"])])
        let stream = try #require(model).transitions()
        try await model?.edit { try $0.append(ListItem(id: "b"), toSection: "s") }
        model = nil
        var delivered: [ReplicaListModel.Transition] = []
        for await transition in stream { delivered.append(transition) }
        #expect(delivered.map(\.toVersion) == [2])
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func syncMergesAConcurrentSourceEditAndPublishesAValidChangeset() async throws {
        let directory = try TemporaryDirectory()
        let (source, model) = try await setUp(directory, [("s", ["a", "b", "c"])])
        let recorder = TransitionRecorder(model)
        let initial = model.sections
        // Mine: c to the front, m at the end, b edited. Theirs, meanwhile: x after a, b edited too.
        try await model.edit { draft in
            try draft.moveElement("c", to: ElementPath(section: 0, element: 0))
            try draft.append(ListItem(id: "m", json: ["v": "m"]), toSection: "s")
            try draft.reloadElement(ListItem(id: "b", json: ["v": "mine"]))
        }
        var theirs = sections([("s", ["a", "x", "b", "c"])])
        theirs[0].elements[2] = ListItem(id: "b", json: ["v": "theirs"])
        try await source.commit(theirs, to: "l")
        #expect(layout(model.sections) == [["s", "c", "a", "b", "m"]])

        let result = try #require(await model.sync())
        #expect(result.push.pushed == 1 && result.pull.pending == 0)
        #expect(result.push.conflicts.map(\.kind) == [.contentConflict])
        #expect(layout(model.sections) == [["s", "c", "a", "x", "b", "m"]])
        #expect(model.sections[0].elements[3] == ListItem(id: "b", json: ["v": "mine"]))
        #expect(model.status.lastConflicts == result.push.conflicts)
        let head = try await source.snapshot(of: "l")
        #expect(model.sections == head.sections)
        #expect(model.sections == (try await model.replica.store.snapshot(of: "l").sections))
        #expect(model.status.pending == 0 && model.status.unconfirmed == 0 && model.status.confirmedVersion == head.version)
        #expect(model.status.lastError == nil && !model.status.isSyncing && !model.status.isOffline)

        let transitions = try await recorder.first(2)
        #expect(transitions.map(\.cause) == [.localEdit, .sync])
        try expectChain(transitions, from: initial, to: model.sections)
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func aFailedSyncLandsInTheStatusAndKeepsTheLocalChange() async throws {
        let directory = try TemporaryDirectory()
        let (_, model) = try await setUp(directory, [("s", ["a"])], modelSource: UnreachableSource())
        try await model.edit { try $0.append(ListItem(id: "b"), toSection: "s") }
        let shown = model.sections
        #expect(await model.sync() == nil)
        #expect(model.status.isOffline && !model.status.isSyncing)
        let error = try #require(model.status.lastError as? SyncError)
        #expect(error.isTransient)
        #expect(model.sections == shown && model.status.pending == 1)
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func theBackgroundSyncPullsSourceCommitsAndPushesLocalEdits() async throws {
        let directory = try TemporaryDirectory()
        let (source, model) = try await setUp(directory, [("s", ["a", "b"])])
        let recorder = TransitionRecorder(model)
        let initial = model.sections
        model.start(retrying: quickRetry, localPollInterval: .milliseconds(50))
        #expect(model.status.isFollowing)

        try await source.commit(sections([("s", ["a", "b", "c"])]), to: "l")
        #expect(await eventually { layout(model.sections) == [["s", "a", "b", "c"]] })
        #expect(model.status.confirmedVersion == 2)

        // (The status is read from the store after the commit: the background sync may have pushed
        // the edit by then, so what it shows at once is not asserted.)
        try await model.edit { try $0.append(ListItem(id: "d", json: ["v": "d"]), toSection: "s") }
        #expect(await eventually { model.status.pending == 0 && model.status.unconfirmed == 0 })
        #expect(layout(try await source.snapshot(of: "l").sections) == [["s", "a", "b", "c", "d"]])
        #expect(await eventually { model.status.confirmedVersion == 3 })
        #expect(model.sections == (try await source.snapshot(of: "l").sections))
        #expect(model.status.lastError == nil && model.status.isFollowing)

        model.stop()
        #expect(await eventually { !model.status.isFollowing })
        try expectChain(recorder.transitions, from: initial, to: model.sections)
        #expect(recorder.transitions.contains { $0.cause == .sync } && recorder.transitions.contains { $0.cause == .localEdit })
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func stopEndsTheBackgroundSyncAndStartResumesIt() async throws {
        let directory = try TemporaryDirectory()
        let (source, model) = try await setUp(directory, [("s", ["a"])])
        model.start(retrying: quickRetry, localPollInterval: .milliseconds(50))
        model.stop()
        #expect(await eventually { !model.status.isFollowing })
        // The task has ended: nothing pushes this edit.
        try await model.edit { try $0.append(ListItem(id: "b"), toSection: "s") }
        await Task.yield()
        #expect(model.status.pending == 1)
        #expect(try await model.replica.status()?.pending == 1)
        #expect(layout(try await source.snapshot(of: "l").sections) == [["s", "a"]])

        model.start(retrying: quickRetry, localPollInterval: .milliseconds(50))
        #expect(await eventually { (try? source.snapshot(of: "l").version) == 2 && model.status.unconfirmed == 0 })
        #expect(layout(try await source.snapshot(of: "l").sections) == [["s", "a", "b"]])

        // Started again while stopping: it keeps running.
        model.stop()
        model.start(retrying: quickRetry, localPollInterval: .milliseconds(50))
        try await source.commit(sections([("s", ["z", "a", "b"])]), to: "l")
        #expect(await eventually { layout(model.sections) == [["s", "z", "a", "b"]] })
        #expect(model.status.isFollowing)
        model.stop()
        #expect(await eventually { !model.status.isFollowing })
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func syncPausesTheBackgroundSyncAndResumesIt() async throws {
        let directory = try TemporaryDirectory()
        let (source, model) = try await setUp(directory, [("s", ["a"])])
        model.start(retrying: quickRetry, localPollInterval: .milliseconds(50))
        try await source.commit(sections([("s", ["a", "b"])]), to: "l")
        let result = try #require(await model.sync())
        #expect(result.pull.version == 2 && layout(model.sections) == [["s", "a", "b"]])
        #expect(model.status.isFollowing)
        try await source.commit(sections([("s", ["a", "b", "c"])]), to: "l")
        #expect(await eventually { layout(model.sections) == [["s", "a", "b", "c"]] })
        model.stop()
        #expect(await eventually { !model.status.isFollowing })
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func anEditOnAHeadThatMovedIsRebasedInsteadOfUndoingIt() async throws {
        let directory = try TemporaryDirectory()
        let (source, model) = try await setUp(directory, [("s", ["a", "b"])])
        let recorder = TransitionRecorder(model)
        let before = model.sections
        // The replica pulls behind the model's back: its head moves, the model still shows a, b.
        try await source.commit(sections([("s", ["a", "b", "x"])]), to: "l")
        try await model.replica.pull(from: LocalSource(source))
        #expect(layout(model.sections) == [["s", "a", "b"]])

        try await model.edit { try $0.removeElement("a") }
        #expect(layout(model.sections) == [["s", "b", "x"]])
        #expect(model.sections == (try await model.replica.store.snapshot(of: "l").sections))
        let transitions = try await recorder.first(1)
        #expect(transitions[0].fromVersion == 1 && transitions[0].toVersion == model.version)
        #expect(throws: Never.self) { try BatchUpdateValidator.validate(transitions[0].changeset, source: before, target: model.sections) }
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    /// A replica replaced by one of a list made anew under its name numbers its versions from 1
    /// again: a model at the same version number still shows the new list, with the change.
    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func aModelOfAReplacedListShowsTheNewOne() async throws {
        let directory = try TemporaryDirectory()
        let (source, model) = try await setUp(directory, [("s", ["a", "b"])])
        #expect(model.version == 1)
        try await source.deleteList("l")
        try await source.commit(sections([("t", ["x"])]), to: "l")
        let recorder = TransitionRecorder(model)
        let synced = await model.sync()
        #expect(synced?.pull.reason == .listReplaced)
        #expect(layout(model.sections) == [["t", "x"]] && model.version == 1)
        let transitions = try await recorder.first(1)
        #expect(transitions.first?.changeset == ListChangeset(source: sections([("s", ["a", "b"])]), target: sections([("t", ["x"])])))
    }

    /// An edit made while the model still shows a list that was replaced under it, at the same
    /// version number, is rebased onto the new list, and its transition goes from what the model
    /// showed (the commit's own changeset goes from the new list).
    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func anEditOnAListReplacedAtTheSameVersionPublishesFromWhatWasShown() async throws {
        let directory = try TemporaryDirectory()
        let (source, model) = try await setUp(directory, [("s", ["a", "b"])])
        try await source.deleteList("l")
        try await source.commit(sections([("t", ["x"])]), to: "l")
        // The replica follows the new list (at its version 1) without the model hearing of it.
        #expect(try await model.replica.pull(from: LocalSource(source)).reason == .listReplaced)
        #expect(model.version == 1 && layout(model.sections) == [["s", "a", "b"]])
        let recorder = TransitionRecorder(model)
        let shown = model.sections
        try await model.edit { draft in draft.appendSection(ListItem(id: "u", json: ["v": "u"])) }
        #expect(layout(model.sections) == [["t", "x"], ["u"]])
        #expect(model.sections == (try await model.replica.store.snapshot(of: "l").sections))
        let transition = try #require(try await recorder.first(1).first)
        #expect(throws: Never.self) { try BatchUpdateValidator.validate(transition.changeset, source: shown, target: model.sections) }
        #expect(model.status.pending == (try await model.replica.status()?.pending))
    }

    @Test func refreshPublishesCommitsMadeElsewhereByTheJournalOrByOneDiff() async throws {
        let directory = try TemporaryDirectory()
        let (source, model) = try await setUp(directory, [("s", ["a", "b"])])
        let recorder = TransitionRecorder(model)
        let initial = model.sections
        try await source.commit(sections([("s", ["b", "a"])]), to: "l")
        try await source.commit(sections([("s", ["b", "a", "c"]), ("t", [])]), to: "l")
        try await model.replica.pull(from: LocalSource(source))
        await model.refresh()
        #expect(model.sections == (try await source.snapshot(of: "l").sections) && model.version == 3)
        var transitions = try await recorder.first(1)
        // By the journal: both entries' stages, in order.
        var replayed = initial
        var stages: [Stage<ListItem, ListItem>] = []
        for entry in try await model.replica.store.journal(of: "l", after: 1).entries {
            let (changeset, next) = try entry.changeset(applyingTo: replayed)
            stages += changeset.stages
            replayed = next
        }
        #expect(transitions[0].changeset == ListChangeset(stages: stages) && transitions[0].cause == .sync)
        try expectChain(transitions, from: initial, to: model.sections)

        // History pruned past the model's version: one diff.
        let shown = model.sections
        try await source.commit(sections([("s", ["c"]), ("t", ["a"])]), to: "l")
        try await source.commit(sections([("t", ["a", "d"]), ("s", ["c"])]), to: "l")
        try await model.replica.pull(from: LocalSource(source))
        try await model.replica.store.prune("l", .keepLast(1))
        await model.refresh()
        #expect(model.sections == (try await source.snapshot(of: "l").sections) && model.version == 5)
        transitions = try await recorder.first(2)
        #expect(throws: Never.self) {
            try BatchUpdateValidator.validate(transitions[1].changeset, source: shown, target: model.sections)
        }
        #expect(transitions[1].changeset == ListChangeset(source: shown, target: model.sections))
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func observationTrackingSeesSectionsChange() async throws {
        let directory = try TemporaryDirectory()
        let (source, model) = try await setUp(directory, [("s", ["a"])])
        let edited = Flag()
        withObservationTracking { _ = model.sections } onChange: { edited.set() }
        #expect(!edited.isSet)
        try await model.edit { try $0.append(ListItem(id: "b"), toSection: "s") }
        #expect(edited.isSet)

        let synced = Flag()
        withObservationTracking { _ = model.sections } onChange: { synced.set() }
        try await source.commit(sections([("s", ["z", "a"])]), to: "l")
        await model.sync()
        #expect(synced.isSet)
        #expect(layout(model.sections) == [["s", "z", "a", "b"]])

        // A sync that changes nothing leaves `sections` alone.
        let untouched = Flag()
        withObservationTracking { _ = model.sections } onChange: { untouched.set() }
        await model.sync()
        #expect(!untouched.isSet)
    }

    // MARK: - Helpers

    /// Each transition turns the previous one's sections into its own, versions chain, and the last
    /// ends at `final`.
    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    func expectChain(_ transitions: [ReplicaListModel.Transition], from initial: [ListSection], to final: [ListSection]) throws {
        var state = initial
        var version: Int?
        for transition in transitions {
            try BatchUpdateValidator.validate(transition.changeset, source: state, target: transition.sections)
            if let version { #expect(transition.fromVersion == version) }
            #expect(transition.toVersion > transition.fromVersion)
            state = transition.sections
            version = transition.toVersion
        }
        #expect(state == final)
    }

    /// Polls `condition` until it holds; `false` when `limit` passes first (a bound for a failing
    /// test, not a timing assertion).
    func eventually(within limit: Duration = .seconds(60), _ condition: () throws -> Bool) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        while true {
            if (try? condition()) == true { return true }
            if clock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// Collects a model's transitions as they are delivered.
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
@MainActor final class TransitionRecorder {
    private(set) var transitions: [ReplicaListModel.Transition] = []

    init(_ model: ReplicaListModel) {
        let stream = model.transitions()
        Task { [weak self] in
            for await transition in stream { self?.transitions.append(transition) }
        }
    }

    /// The first `count` transitions, once delivered.
    func first(_ count: Int) async throws -> [ReplicaListModel.Transition] {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        while transitions.count < count, clock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try #require(transitions.count >= count)
        return Array(transitions.prefix(count))
    }
}

/// A flag set from any thread.
final class Flag: @unchecked Sendable {
    // Safe: `value` is reached only under `lock`.
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

/// A source that cannot be reached: every request fails with a transient transport error.
struct UnreachableSource: ListSource {
    private var error: SyncError { .transport("no connection", transient: true) }
    func identity() async throws -> StoreIdentity { throw error }
    func summary(of list: String) async throws -> ListSummary { throw error }
    func journal(of list: String, after version: Int, limit: Int) async throws -> JournalPage { throw error }
    func snapshot(of list: String, at version: Int?) async throws -> ListSnapshot { throw error }
    func catchUp(of list: String, from version: Int, applyingTo state: [ListSection]) async throws
        -> (changeset: ListChangeset, head: ListSnapshot)
    { throw error }
    func waitForCommit(to list: String, after version: Int, timeout: Duration) async throws -> Bool { throw error }
    func acknowledge(consumer name: String, of list: String, version: Int) async throws { throw error }
    func push(_ push: Push, to list: String) async throws -> PushAnswer { throw error }
    func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) async throws -> [PushAnswer] { throw error }
}
