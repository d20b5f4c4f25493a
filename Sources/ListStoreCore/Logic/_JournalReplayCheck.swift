import ListMerge
import ListJSON

/// The check `verify` makes of one list, on any engine: replays the journal from the base snapshot
/// page by page (every entry must follow its parent and reproduce its stored digest and counts),
/// then compares the head rows and their content hashes with the replayed snapshot. The engine
/// reads the pages and the head; this type decides.
///
/// Not API (package-visible: `PostgresStore` verifies with it).
package struct _JournalReplayCheck {
    /// What the check found so far.
    package private(set) var result: ListVerification
    /// The replayed snapshot at `version`.
    package private(set) var state: [ListSection] = []
    /// The last version replayed.
    package private(set) var version: Int
    private let info: ListRow
    private var digest: ListDigest
    /// The versions of the list's stored snapshots, and the replayed digests at those versions.
    private let storedVersions: Set<Int>
    private var storedDigests: [Int: ListDigest] = [:]

    /// Starts at the base snapshot of the list `info` describes; `storedSnapshots` are the versions of
    /// its stored snapshots, to be checked with `check(storedSnapshot:document:)` after the replay.
    package init(name: String, info: ListRow, storedSnapshots: [Int] = []) {
        self.info = info
        storedVersions = Set(storedSnapshots)
        result = ListVerification(
            name: name, baseVersion: info.baseVersion, headVersion: info.headVersion, versionsVerified: 0,
            firstDivergentVersion: nil, problem: nil)
        version = info.baseVersion
        digest = ListDigest.of([])
        do {
            state = try info.baseSections()
            digest = ListDigest.of(state)
        } catch {
            diverge(at: version + 1, "\(error)")
        }
    }

    /// Whether more entries are needed: no divergence yet, and the head not reached.
    package var needsEntries: Bool { result.isValid && version < info.headVersion }

    /// The number of entries between the base and the head.
    package var total: Int { info.headVersion - info.baseVersion }

    /// Replays `page`, the entries after `version` (an empty page: the next entry is missing).
    package mutating func replay(_ page: [JournalEntry], progress: ((VerificationProgress) -> Void)?) {
        guard !page.isEmpty else { return diverge(at: version + 1, "journal entry \(version + 1) is missing") }
        for entry in page where result.isValid {
            guard entry.version == version + 1 else { return diverge(at: version + 1, "journal entry \(version + 1) is missing") }
            guard entry.parentVersion == version else {
                return diverge(at: entry.version, "version \(entry.version) names parent \(entry.parentVersion), not \(version)")
            }
            do {
                state = try entry.changeset(applyingTo: state).result
            } catch {
                return diverge(at: entry.version, "\(error)")
            }
            digest = ListDigest.of(state)
            guard digest == entry.digest else {
                return diverge(
                    at: entry.version, "replaying version \(entry.version) gives digest \(digest.hex), the journal says \(entry.digest.hex)")
            }
            let elements = state.reduce(0) { $0 + $1.elements.count }
            guard entry.sectionCount == state.count, entry.elementCount == elements else {
                return diverge(
                    at: entry.version,
                    "version \(entry.version) records \(entry.sectionCount) sections and \(entry.elementCount) elements, the replay has \(state.count) and \(elements)")
            }
            version = entry.version
            if storedVersions.contains(version) { storedDigests[version] = digest }
            result.versionsVerified += 1
            progress?(VerificationProgress(list: result.name, completed: result.versionsVerified, total: total))
        }
    }

    /// Whether the head row's digest is the replayed one (checked before the head rows are read).
    package mutating func checkHeadDigest() -> Bool {
        guard result.isValid else { return false }
        guard info.headDigest == digest else {
            diverge(at: info.headVersion, "the head digest \(info.headDigest.hex) is not the replayed digest \(digest.hex)")
            return false
        }
        return true
    }

    /// Compares the head rows (`sections`, and `head`, their ids and content hashes as the store
    /// reads them for a commit) with the replayed snapshot, and their content hashes.
    package mutating func check(head: StoredHead, sections: [ListSection]) {
        guard result.isValid else { return }
        guard sections == state else { return diverge(at: info.headVersion, "the head rows differ from the replayed snapshot") }
        guard head.sections.count == sections.count else {
            return diverge(at: info.headVersion, "the head has \(head.sections.count) sections, its rows \(sections.count)")
        }
        for (s, (kept, section)) in zip(head.sections, sections).enumerated() {
            guard ExactString(kept.model.id) == ExactString(section.model.id), kept.model.hash == ContentHash(of: section.model.content) else {
                return diverge(at: info.headVersion, "section \(s) of the head has a wrong content hash")
            }
            guard kept.elements.count == section.elements.count else {
                return diverge(at: info.headVersion, "section \(s) of the head has \(kept.elements.count) elements, its rows \(section.elements.count)")
            }
            for (e, (item, element)) in zip(kept.elements, section.elements).enumerated() {
                guard ExactString(item.id) == ExactString(element.id), item.hash == ContentHash(of: element.content) else {
                    return diverge(at: info.headVersion, "element \(e) of section \(s) of the head has a wrong content hash")
                }
            }
        }
    }

    /// For a replica list (after `check(head:sections:)`): its confirmed state must be the source
    /// version its position names, and its head (`head`, read from its rows) the outbox rebased
    /// onto the confirmed state.
    package mutating func check(replica pending: PendingState, head: [ListSection]) {
        guard result.isValid else { return }
        guard ListDigest.of(pending.confirmed) == pending.position.digest else {
            return diverge(
                at: info.headVersion, "the confirmed state is not source version \(pending.position.version) (its digest differs)")
        }
        let rebased = pending.outbox.reduce(pending.confirmed) { Rebase($1.intents, onto: $0).snapshot }
        guard rebased == head else {
            return diverge(at: info.headVersion, "the head is not the \(pending.outbox.count) local changes rebased onto the confirmed state")
        }
    }

    /// Checks a stored snapshot (after the replay reached the head): its version must be in the
    /// history after the base and its snapshot document the replayed version.
    package mutating func check(storedSnapshot version: Int, document: [UInt8]) {
        guard result.isValid else { return }
        guard let replayed = storedDigests[version] else {
            return diverge(
                at: version, "a stored snapshot at version \(version) is outside the history after the base (\(info.baseVersion) to \(info.headVersion))")
        }
        do {
            let sections = try _TimeTravel.sections(of: document, list: result.name, version: version)
            guard ListDigest.of(sections) == replayed else {
                return diverge(at: version, "the stored snapshot at version \(version) is not the replayed snapshot (its digest differs)")
            }
        } catch {
            diverge(at: version, "\(error)")
        }
    }

    /// Records the first divergence (later ones are not recorded).
    package mutating func diverge(at version: Int, _ problem: String) {
        guard result.isValid else { return }
        result.firstDivergentVersion = version
        result.problem = problem
    }
}
