import ListDiff
import ListJSON

/// What a commit writes: the changeset from the head to the target, which head item each target
/// item is, and which items the changeset places (moves or inserts), so they need new positions.
///
/// A commit of a snapshot gets it by diffing (`diffing`, on another thread while whole sections are
/// written); a replica's commit of its source's journal entry by replaying the entry's stages on the
/// head (`replaying`), without a diff.
struct _CommitPlan: Sendable {
    let target: [ListSection]
    let changeset: ListChangeset
    let pairing: _DiffInput
    /// For each target section, whether the changeset moves or inserts it.
    let sectionPlaced: [Bool]
    /// For each target element (flat), whether the changeset moves or inserts it.
    let elementPlaced: [Bool]
    /// The target's identifier hashes, when the diff computed them (kept in the new head for the
    /// next diff).
    let targetIDHashes: [Int]?
    /// The journal's JSON of the changeset.
    let stagesJSON: _Background<[UInt8]>

    /// Diffs `head` against `target`; the journal's JSON is then written on another thread.
    /// - Complexity: O(n + k log k) for n items and k changes.
    static func diffing(_ head: _Head, to target: [ListSection]) -> _CommitPlan {
        let sourceIDHashes = head.elementIDHashes ?? _IdentifierHashes.of(head.sections)
        let targetIDHashes = _IdentifierHashes.of(target)
        let (changeset, pairing) = ListChangeset._changesetAndPairing(
            source: head.sections, target: target, identifierHashes: (sourceIDHashes, targetIDHashes))
        let targetStart = pairing.targetStart
        var sectionPlaced = [Bool](repeating: false, count: target.count)
        var elementPlaced = [Bool](repeating: false, count: targetStart.last ?? 0)
        for stage in changeset {
            for insertion in stage.sectionInserted { sectionPlaced[insertion.index] = true }
            for move in stage.sectionMoved { sectionPlaced[move.to] = true }
            for move in stage.elementMoved { elementPlaced[targetStart[move.to.section] + move.to.element] = true }
            for change in stage.elementInserted { elementPlaced[targetStart[change.path.section] + change.path.element] = true }
        }
        return _CommitPlan(
            target: target, changeset: changeset, pairing: pairing, sectionPlaced: sectionPlaced,
            elementPlaced: elementPlaced, targetIDHashes: targetIDHashes,
            stagesJSON: _Background { changeset.isEmpty ? [] : changeset.stagesJSON })
    }

    /// Applies the stages of a journal entry (`stagesJSON`, as a store wrote them) to `head`; the
    /// journal keeps the same JSON.
    ///
    /// - Throws: `.invalidEdit` when the JSON is not a list of stages or they do not apply to the head.
    /// - Complexity: O(stages × sections + touched elements + k log k).
    static func replaying(_ stagesJSON: [UInt8], on head: _Head, describedAs what: () -> String) throws -> _CommitPlan {
        let replayed: (changeset: ListChangeset, result: [ListSection], pairing: _ReplayedPairing)
        do {
            let stages = try StageDocument._decodeStagesWithoutIDs(try JSONParser().parse(stagesJSON), as: ListItem.self)
            replayed = try stages._replay(
                on: head.sections, mergeModel: { old, new in ListItem(id: old.id, content: new.content) },
                merge: { old, new in ListItem(id: old.id, content: new.content) })
        } catch {
            throw StoreError(.invalidEdit, "\(what()) does not apply to version \(head.version): \(error)")
        }
        return _CommitPlan(
            target: replayed.result, changeset: replayed.changeset, pairing: replayed.pairing.pairing,
            sectionPlaced: replayed.pairing.sectionPlaced, elementPlaced: replayed.pairing.elementPlaced,
            targetIDHashes: nil, stagesJSON: _Background(finished: replayed.changeset.isEmpty ? [] : stagesJSON))
    }
}
