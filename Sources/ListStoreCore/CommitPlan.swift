import ListDiff
import ListJSON

/// What a commit writes: the changeset from the head to the target, which head item each target
/// item is, and which items the changeset places (moves or inserts), so they need new positions.
///
/// A commit of a snapshot gets it by diffing (`diffing`, on another thread while whole sections are
/// written); a replica's commit of its source's journal entry by replaying the entry's stages on the
/// head (`replaying`), without a diff.
///
/// Not API: package-visible for the engines.
package struct CommitPlan: Sendable {
    package let target: [ListSection]
    package let changeset: ListChangeset
    /// Which head item each target item is, and which ones the changeset places.
    package let pairing: DiffPairing
    /// The target's identifier hashes, when the diff computed them (kept in the new head for the
    /// next diff).
    package let targetIDHashes: [Int]?
    /// The journal's JSON of the changeset, when known already (a replayed entry's); `nil` until
    /// `encodingStages()` writes it.
    private let knownStagesJSON: [UInt8]?

    /// The journal's JSON of the changeset: written on another thread, started when called (a
    /// commit starts it once its rows are placed, so that it runs while they are written rather
    /// than beside the hashing of the changed contents).
    /// - Complexity: O(size of the changeset) on another thread; O(1) here.
    package func encodingStages() -> _Background<[UInt8]> {
        if let knownStagesJSON { return _Background(finished: knownStagesJSON) }
        let changeset = self.changeset
        return _Background { changeset.isEmpty ? [] : changeset.stagesJSON }
    }

    /// Diffs `head` against `target` (the journal's JSON is written later, by `encodingStages()`).
    /// - Complexity: O(n + k log k) for n items and k changes.
    package static func diffing(_ head: StoredHead, to target: [ListSection]) -> CommitPlan {
        let sourceIDHashes = head.elementIDHashes ?? _IdentifierHashes.of(head.sections)
        let targetIDHashes = _IdentifierHashes.of(target)
        let (changeset, pairing) = ListChangeset.changesetAndPairing(
            source: head.sections, target: target, identifierHashes: (sourceIDHashes, targetIDHashes))
        return CommitPlan(
            target: target, changeset: changeset, pairing: pairing, targetIDHashes: targetIDHashes,
            knownStagesJSON: nil)
    }

    /// Applies the stages of a journal entry (`stagesJSON`, as a store wrote them) to `head`; the
    /// journal keeps the same JSON.
    ///
    /// - Throws: `.invalidEdit` when the JSON is not a list of stages or they do not apply to the head.
    /// - Complexity: O(stages × sections + touched elements + k log k).
    package static func replaying(_ stagesJSON: [UInt8], on head: StoredHead, describedAs what: () -> String) throws -> CommitPlan {
        let replayed: (changeset: ListChangeset, result: [ListSection], pairing: DiffPairing)
        do {
            let stages = try StageDocument._decodeStagesWithoutIDs(try JSONParser().parse(stagesJSON), as: ListItem.self)
            replayed = try stages.replay(
                on: head.sections, mergeModel: { old, new in ListItem(id: old.id, content: new.content) },
                merge: { old, new in ListItem(id: old.id, content: new.content) })
        } catch {
            throw StoreError(.invalidEdit, "\(what()) does not apply to version \(head.version): \(error)")
        }
        return CommitPlan(
            target: replayed.result, changeset: replayed.changeset, pairing: replayed.pairing, targetIDHashes: nil, knownStagesJSON: replayed.changeset.isEmpty ? [] : stagesJSON)
    }
}
