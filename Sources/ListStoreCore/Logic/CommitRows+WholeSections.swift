import ListDiff

extension CommitRows {
    /// The first step of a commit's rows, known from the section pairing alone: head sections that
    /// leave (their section row and all its element rows are deleted) and target sections that come
    /// whole (their elements' positions, contents and hashes; their section rows come in the second
    /// step, whose section positions depend on the diff).
    ///
    /// ```swift
    /// let whole = CommitRows.WholeSections(head: head, target: target, contents: contents, sectionPairing: nil)
    /// for row in whole.deletedSectionRows { /* DELETE the section and its elements */ }
    /// for k in whole.insertedSections.indices {
    ///     for element in whole.elements(ofInserted: k) { /* INSERT it */ }
    /// }
    /// ```
    ///
    /// Not API: package-visible for the engines.
    package struct WholeSections: Sendable {
        /// How head and target sections pair (`DiffPairing.pairSections`, or a replay's).
        package let sectionPairing: (targetOf: [Int], sourceOf: [Int])
        /// Rows of head sections without a partner in the target.
        package let deletedSectionRows: [Int64]
        /// Target sections without a partner in the head, in target order.
        package let insertedSections: [Int]
        /// The first content of an inserted section's elements that is not canonical JSON (flat
        /// target index); when set, the engine writes no inserted element: the commit fails in the
        /// second step.
        package let failure: (index: Int, error: StoreError)?
        /// For each target section, where its elements start in `positions`/`hashes` (-1 if paired).
        private let offset: [Int]
        private let positions: [Int64]
        private let hashes: [ContentHash]
        /// The target's ids and content hashes, and the contents its items bring.
        package let target: [HeadSection]
        package let contents: CommitContents
        /// The blob references of the contents checked (those of inserted sections, then, once
        /// `hashContents` ran, every content the commit brings).
        package let references: _BlobReferences

        /// - Parameter sectionPairing: how the sections of the head and the target pair, when the
        ///   caller knows (a replayed changeset); otherwise they are paired as the diff pairs them.
        /// - Complexity: O(elements of inserted sections + their content size) — checked on two threads.
        package init(
            head: StoredHead, target: [HeadSection], contents: CommitContents, sectionPairing: (targetOf: [Int], sourceOf: [Int])?
        ) {
            let references = _BlobReferences()
            self.references = references
            let pairing = sectionPairing ?? DiffPairing.pairSections(source: head.sections, target: target)
            self.sectionPairing = pairing
            self.target = target
            self.contents = contents
            deletedSectionRows = head.sections.indices.filter { pairing.targetOf[$0] < 0 }.map { head.sectionRows[$0] }
            let inserted = target.indices.filter { pairing.sourceOf[$0] < 0 }
            insertedSections = inserted
            var offset = [Int](repeating: -1, count: target.count)
            var starts = [0]
            for t in inserted {
                offset[t] = starts.last!
                starts.append(starts.last! + target[t].elements.count)
            }
            self.offset = offset
            let (hashes, failure) = _ContentChecks.hashes(count: starts.last!, hashing: !contents.hashed, references: references) { [starts] k in
                let i = DiffPairing.section(containing: k, starts: starts)
                let (t, e) = (inserted[i], k - starts[i])
                let item = target[t].elements[e]
                return (item, contents.item(bringing: item).content, { "sections[\(t)].elements[\(e)].content" })
            }
            if let failure {
                let i = DiffPairing.section(containing: failure.index, starts: starts)
                let targetStart = DiffPairing.flatStarts(target)
                self.failure = (targetStart[inserted[i]] + failure.index - starts[i], failure.error)
                self.positions = []
                self.hashes = []
                return
            }
            self.failure = nil
            self.hashes = hashes
            var positions: [Int64] = []
            positions.reserveCapacity(starts.last!)
            for t in inserted {
                let count = target[t].elements.count
                positions.append(
                    contentsOf: _Positions.assign([Int64?](repeating: nil, count: count), occupied: []).positions)
            }
            self.positions = positions
        }

        /// The positions of the elements of the k-th inserted section.
        package func elementPositions(ofInserted k: Int) -> ArraySlice<Int64> {
            let t = insertedSections[k]
            return positions[offset[t]..<offset[t] + target[t].elements.count]
        }

        /// The elements of the k-th inserted section, each with its position, content and hash.
        package func elements(ofInserted k: Int) -> [(position: Int64, item: ListItem, hash: ContentHash)] {
            let t = insertedSections[k]
            let start = offset[t]
            return target[t].elements.enumerated().map { e, element in
                (positions[start + e], contents.item(bringing: element), hashes[start + e])
            }
        }

        /// Checks every content the target brings that is not checked yet (those of inserted
        /// sections were) and hashes it unless its item's hash is made; unchanged items keep the
        /// head's hash. The element hashes are `nil` when the items' hashes are made (`contents.hashed`).
        /// - Throws: `.invalidSnapshot` naming the first item, in document order (section contents
        ///   first), whose content is not canonical JSON.
        func hashContents(_ pairing: DiffPairing, head: StoredHead) throws -> (sections: [ContentHash], elements: [ContentHash]?) {
            var sectionHashes = [ContentHash]()
            sectionHashes.reserveCapacity(target.count)
            for (t, section) in target.enumerated() {
                let s = pairing.sectionSourceOf[t]
                if s >= 0 && !pairing.sectionChanged[t] {
                    sectionHashes.append(head.sections[s].model.hash)
                } else {
                    let content = contents.item(bringing: section.model).content
                    try _ContentChecks.checkCanonical(content, references: references) { "sections[\(t)].content" }
                    sectionHashes.append(contents.hashed ? section.model.hash : ContentHash(of: content))
                }
            }
            // Unchanged elements keep the head's hash; the others are listed and hashed together
            // (when the items have their hashes, only checked).
            let targetStart = pairing.targetStart
            let sourceStart = pairing.sourceStart
            let placeholder = ContentHash(of: [])
            var elementHashes = [ContentHash]()
            if !contents.hashed { elementHashes.reserveCapacity(pairing.targetElementCount) }
            var pending = [Int]()
            for t in target.indices {
                let (start, end) = (targetStart[t], targetStart[t + 1])
                if offset[t] >= 0 {
                    // Hashed already (a failure there is reported below).
                    if !contents.hashed {
                        elementHashes.append(
                            contentsOf: hashes.isEmpty
                                ? Array(repeatElement(placeholder, count: end - start)) : Array(hashes[offset[t]..<offset[t] + end - start]))
                    }
                    continue
                }
                var s = 0
                for j in start..<end {
                    let source = Int(pairing.elementSourceOf[j])
                    if source >= 0 && !pairing.elementChanged[j] {
                        guard !contents.hashed else { continue }
                        // Most unchanged elements stay in their section: look from the last one found.
                        if !(sourceStart[s]..<sourceStart[s + 1]).contains(source) {
                            s = DiffPairing.section(containing: source, starts: sourceStart)
                        }
                        elementHashes.append(head.sections[s].elements[source - sourceStart[s]].hash)
                    } else {
                        if !contents.hashed { elementHashes.append(placeholder) }
                        pending.append(j)
                    }
                }
            }
            let (pendingIndices, target, contents) = (pending, target, contents)
            let (computed, pendingFailure) = _ContentChecks.hashes(count: pending.count, hashing: !contents.hashed, references: references) { k in
                let j = pendingIndices[k]
                let t = DiffPairing.section(containing: j, starts: targetStart)
                let e = j - targetStart[t]
                let item = target[t].elements[e]
                return (item, contents.item(bringing: item).content, { "sections[\(t)].elements[\(e)].content" })
            }
            if !contents.hashed { for (k, j) in pending.enumerated() { elementHashes[j] = computed[k] } }
            let failures = [pendingFailure.map { (index: pending[$0.index], error: $0.error) }, failure].compactMap { $0 }
            if let first = failures.min(by: { $0.index < $1.index }) { throw first.error }
            return (sectionHashes, contents.hashed ? nil : elementHashes)
        }
    }
}
