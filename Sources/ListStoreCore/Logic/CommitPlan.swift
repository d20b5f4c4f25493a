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
    /// The target's ids and content hashes; its items that bring new content name it in `contents`.
    package let target: [HeadSection]
    /// The contents the target's new and changed items bring.
    package let contents: CommitContents
    /// The target with every content, when the commit was given it whole (a snapshot, an edit, a
    /// merge); `nil` for a replayed entry, whose unchanged contents are in the rows.
    package let snapshot: [ListSection]?
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
    /// than beside the checking of the changed contents).
    /// - Complexity: O(size of the changeset) on another thread; O(1) here.
    package func encodingStages() -> _Background<[UInt8]> {
        if let knownStagesJSON { return _Background(finished: knownStagesJSON) }
        let changeset = self.changeset
        return _Background { changeset.isEmpty ? [] : changeset.stagesJSON }
    }

    /// Diffs `head` against `target` (`snapshot`'s items, each bringing its content:
    /// `CommitContents.of(snapshot)`; or, without `snapshot`, a merge's items, of which those whose
    /// content it did not read bring none); the journal's JSON is
    /// written later, by `encodingStages()`. `nil` when the changeset would need a content the target
    /// does not bring.
    /// - Complexity: O(n + k log k) for n items and k changes.
    package static func diffing(
        _ head: StoredHead, to target: (sections: [HeadSection], contents: CommitContents), snapshot: [ListSection]?
    ) -> CommitPlan? {
        let sourceIDHashes = head.elementIDHashes ?? _IdentifierHashes.of(head.sections)
        let targetIDHashes = _IdentifierHashes.of(target.sections)
        let (changeset, pairing) = StagedChangeset<HeadItem, HeadItem>.changesetAndPairing(
            source: head.sections, target: target.sections, identifierHashes: (sourceIDHashes, targetIDHashes))
        guard let items = snapshot != nil ? target.contents.items(of: changeset) : target.contents.broughtItems(of: changeset) else {
            return nil
        }
        return CommitPlan(
            target: target.sections, contents: target.contents, snapshot: snapshot, changeset: items, pairing: pairing,
            targetIDHashes: targetIDHashes, knownStagesJSON: nil)
    }

    /// Applies the stages of a journal entry (`stagesJSON`, as a store wrote them) to `head`; the
    /// journal keeps the same JSON. Stages that place a head element where its row is not kept (into
    /// a section they insert, or out of a section they delete; another store's diff may make them)
    /// need its content: they are applied again to the head's sections read whole (`whole`), or,
    /// without `whole`, give `nil`.
    ///
    /// - Throws: `.invalidEdit` when the JSON is not a list of stages or they do not apply to the head.
    /// - Complexity: O(stages × sections + touched elements + k log k), plus the contents the stages bring.
    package static func replaying(
        _ stagesJSON: [UInt8], decoded: ListChangeset? = nil, on head: StoredHead, describedAs what: () -> String,
        reading whole: (() throws -> [ListSection])?
    ) throws -> CommitPlan? {
        let stages: ListChangeset
        do {
            stages = try decoded ?? Self.stages(of: stagesJSON)
        } catch {
            throw StoreError(.invalidEdit, "\(what()) does not apply to version \(head.version): \(error)")
        }
        func replay(on source: [HeadSection], contents: CommitContents) throws -> CommitPlan {
            let brought = CommitContents.bringing(stages, adding: contents)
            let replayed: (changeset: StagedChangeset<HeadItem, HeadItem>, result: [HeadSection], pairing: DiffPairing)
            do {
                replayed = try brought.changeset.replay(
                    on: source,
                    mergeModel: { old, new in HeadItem(id: old.id, hash: new.hash, fingerprint: new.fingerprint, content: new.content) },
                    merge: { old, new in HeadItem(id: old.id, hash: new.hash, fingerprint: new.fingerprint, content: new.content) })
            } catch {
                throw StoreError(.invalidEdit, "\(what()) does not apply to version \(head.version): \(error)")
            }
            return CommitPlan(
                target: replayed.result, contents: brought.contents, snapshot: nil,
                changeset: brought.contents.items(of: replayed.changeset), pairing: replayed.pairing, targetIDHashes: nil,
                knownStagesJSON: replayed.changeset.isEmpty ? [] : stagesJSON)
        }
        let plan = try replay(on: head.sections, contents: CommitContents())
        guard !plan.placesKeptRows else { return plan }
        guard let whole else { return nil }
        let (sections, contents) = [_MergeSection](try whole()).commitTarget
        return try replay(on: sections, contents: contents)
    }

    /// The stages of a journal entry's JSON (`decoded` for `replaying`).
    /// - Throws: what decoding throws, when the JSON is not a list of stages.
    package static func stages(of stagesJSON: [UInt8]) throws -> ListChangeset {
        try StageDocument._decodeStagesWithoutIDs(try JSONParser().parse(stagesJSON), as: ListItem.self)
    }

    /// Whether every target item that has no row to keep (an inserted section's, an element without
    /// a partner in the head) brings its content.
    /// - Complexity: O(n).
    private var placesKeptRows: Bool {
        let brought = contents
        var flat = 0
        for (t, section) in target.enumerated() {
            let inserted = pairing.sectionSourceOf[t] < 0
            if inserted && brought[section.model] == nil { return false }
            for element in section.elements {
                if (inserted || pairing.elementSourceOf[flat] < 0) && brought[element] == nil { return false }
                flat += 1
            }
        }
        return true
    }
}
