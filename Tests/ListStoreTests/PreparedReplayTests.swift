import ListStore
import ListStoreCore
import ListStoreTestSupport
import Testing

/// A replica's next entry, replayed while the entry before it is flushed (`_PreparedReplay`), is
/// taken only by a commit that replays the same stages on the same head (store, list row, version,
/// digest), and only once; stages that do not apply leave nothing to take; a plan made later takes
/// its place.
struct PreparedReplayTests {
    @Test func aPreparedReplayIsTakenOnlyForItsHeadAndStagesAndOnce() throws {
        let directory = try TemporaryDirectory()
        let location = directory.file("s.liststore")
        let store = try Store(path: location)
        let versions = [linearList(5), linearList(6), linearList(6, content: 1)]
        for sections in versions { try store.commit(sections, to: "l") }
        let entries = try store.journal(of: "l", after: 0, limit: 10).entries
        var head = StoredHead.empty
        (head.listID, head.version, head.digest, head.sections) = (1, 1, ListDigest.of(versions[0]), CommitContents.of(versions[0]).sections)
        let stages = entries[1].stagesJSON
        let second = CommitContents.of(versions[1]).sections
        // A place of its own: the process's (`shared`) is used by every pull of the tests running
        // meanwhile.
        let prepared = _PreparedReplay()

        prepared.prepare(stages, on: head, at: location)
        var others = [head, head, head]
        others[0].listID = 2
        others[1].version = 2
        others[2].digest = ListDigest.of(versions[1])
        for other in others { #expect(prepared.take(stages, on: other, at: location) == nil) }
        #expect(prepared.take(stages, on: head, at: location + "-other") == nil)
        #expect(prepared.take(entries[2].stagesJSON, on: head, at: location) == nil)
        #expect(prepared.take(stages, on: head, at: location)?.target.isSameList(as: second) == true)
        #expect(prepared.take(stages, on: head, at: location) == nil)

        // A later plan replaces the one kept.
        prepared.prepare(stages, on: head, at: location)
        prepared.prepare(stages, on: head, at: location + "-other")
        #expect(prepared.take(stages, on: head, at: location) == nil)
        #expect(prepared.take(stages, on: head, at: location + "-other")?.target.isSameList(as: second) == true)

        // Stages that do not apply to the head: nothing to take (the commit replays them itself and
        // reports why).
        prepared.prepare(entries[2].stagesJSON, on: StoredHead.empty, at: location)
        #expect(prepared.take(entries[2].stagesJSON, on: StoredHead.empty, at: location) == nil)
    }
}
