import ListDiff
import ListJSON

/// Rebuilds an older version of a list from the nearest stored point at or before it (the base or a
/// stored snapshot, see `_StoredSnapshotPolicy`) and the journal entries after that point, on any engine.
///
/// The entries' stages are decoded one entry at a time but applied as one staged changeset, so the
/// items are moved as small tokens from stage to stage and the result is built once.
///
/// Not API: package-visible, so that both engines rebuild versions with the same code.
package enum _TimeTravel {
    /// The state after `entries` (consecutive journal entries, oldest first: their versions and
    /// stages JSON as stored) applied to `state`, the list at the version before the first.
    ///
    /// - Throws: `StoreError.damaged` naming the entry whose stages do not decode or do not apply.
    /// - Complexity: O(n + operations + stages × (sections + elements of the sections they touch)).
    package static func replay(_ entries: [(version: Int, stages: [UInt8])], on state: [ListSection], list: String) throws
        -> [ListSection]
    {
        guard !entries.isEmpty else { return state }
        var stages: [Stage<ListItem, ListItem>] = []
        var lastStage: [Int] = []  // the index after each entry's last stage
        for entry in entries {
            guard !entry.stages.isEmpty else {
                lastStage.append(stages.count)
                continue
            }
            do {
                let value = try JSONParser().parse(entry.stages)
                stages += try StageDocument._decodeStagesWithoutIDs(value, as: ListItem.self).stages
            } catch {
                throw StoreError(.damaged, "journal entry \(entry.version) of list '\(list)' does not decode: \(error)")
            }
            lastStage.append(stages.count)
        }
        do {
            return try ListChangeset(stages: stages).replay(
                on: state, mergeModel: { old, new in ListItem(id: old.id, content: new.content) },
                merge: { old, new in ListItem(id: old.id, content: new.content) }
            ).result
        } catch {
            let k = lastStage.firstIndex { $0 > (error.stage ?? 0) } ?? entries.count - 1
            throw StoreError(.damaged, "journal entry \(entries[k].version) of list '\(list)' does not replay: \(error)")
        }
    }

    /// The sections of a stored snapshot document (a base or a stored snapshot).
    /// - Throws: `StoreError.damaged` when it does not decode.
    package static func sections(of document: [UInt8], list: String, version: Int) throws -> [ListSection] {
        try ListRow.sections(of: document, "the stored snapshot of list '\(list)' at version \(version)")
    }
}

extension ListSnapshot {
    /// Throws `.damaged` unless the sections hash to the digest (a version rebuilt from a stored
    /// snapshot, before pruning makes it the base).
    /// - Complexity: O(n).
    package func checkDigest() throws {
        guard ListDigest.of(sections) == digest else {
            throw StoreError(
                .damaged, "version \(version) of list '\(list)' rebuilds with digest \(ListDigest.of(sections).hex), the journal says \(digest.hex); run verify")
        }
    }
}
