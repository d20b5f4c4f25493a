import ListDiff

extension CommitRows {
    /// The first step of a commit's rows, known from the section pairing alone: head sections that
    /// leave (their section row and all its element rows are deleted) and target sections that come
    /// whole (their elements' positions and content hashes; their section rows come in the second
    /// step, whose section positions depend on the diff).
    ///
    /// ```swift
    /// let whole = CommitRows.WholeSections(head: head, target: target, sectionPairing: nil)
    /// for row in whole.deletedSectionRows { /* DELETE the section and its elements */ }
    /// for (k, t) in whole.insertedSections.enumerated() {
    ///     let positions = whole.elementPositions(ofInserted: k)  // target[t].elements[e] at positions[e]
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
        /// The first content of an inserted section that is not canonical JSON (flat target index);
        /// when set, the engine writes no inserted element: the commit fails in the second step.
        package let failure: (index: Int, error: StoreError)?
        /// For each target section, where its elements start in `positions`/`hashes` (-1 if paired).
        private let offset: [Int]
        private let positions: [Int64]
        private let hashes: [ContentHash]
        /// The target snapshot.
        package let target: [ListSection]

        /// - Parameter sectionPairing: how the sections of the head and the target pair, when the
        ///   caller knows (a replayed changeset); otherwise they are paired as the diff pairs them.
        /// - Complexity: O(elements of inserted sections + content size) — hashed on two threads.
        package init(head: StoredHead, target: [ListSection], sectionPairing: (targetOf: [Int], sourceOf: [Int])?) {
            let pairing = sectionPairing ?? DiffPairing.pairSections(source: head.sections, target: target)
            self.sectionPairing = pairing
            self.target = target
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
            let (hashes, failure) = _ContentHashing.hashes(of: target, count: starts.last!) { [starts] k in
                let i = DiffPairing.section(containing: k, starts: starts)
                return (inserted[i], k - starts[i])
            }
            if let failure {
                let i = DiffPairing.section(containing: failure.index, starts: starts)
                let targetStart = DiffPairing.flatStarts(target)
                self.failure = (targetStart[inserted[i]] + failure.index - starts[i], failure.error)
                self.hashes = []
                self.positions = []
                return
            }
            self.failure = nil
            self.hashes = hashes
            var positions: [Int64] = []
            positions.reserveCapacity(hashes.count)
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

        /// The content hashes of the elements of the k-th inserted section.
        package func elementHashes(ofInserted k: Int) -> ArraySlice<ContentHash> {
            let t = insertedSections[k]
            return hashes[offset[t]..<offset[t] + target[t].elements.count]
        }

        /// Checks and hashes every content of the target (inserted sections were hashed already);
        /// unchanged items keep the head's hash.
        /// - Throws: `.invalidSnapshot` naming the first item, in document order (section contents
        ///   first), whose content is not canonical JSON.
        func hashContents(_ pairing: DiffPairing, head: StoredHead) throws -> (sections: [ContentHash], elements: [ContentHash]) {
            var sectionHashes = [ContentHash]()
            sectionHashes.reserveCapacity(target.count)
            for (t, section) in target.enumerated() {
                let s = pairing.sectionSourceOf[t]
                if s >= 0 && !pairing.sectionChanged[t] {
                    sectionHashes.append(head.sectionHashes[s])
                } else {
                    sectionHashes.append(try _ContentHashing.checkedHash(section.model) { "sections[\(t)].content" })
                }
            }
            // Unchanged elements keep the head's hash; the others are listed and hashed together.
            let targetStart = pairing.targetStart
            let placeholder = ContentHash(of: [])
            var elementHashes = [ContentHash]()
            elementHashes.reserveCapacity(pairing.targetElementCount)
            var pending = [Int]()
            for t in target.indices {
                let (start, end) = (targetStart[t], targetStart[t + 1])
                if offset[t] >= 0 {
                    // Hashed already (a failure there is reported below).
                    if hashes.isEmpty {
                        elementHashes.append(contentsOf: repeatElement(placeholder, count: end - start))
                    } else {
                        elementHashes.append(contentsOf: hashes[offset[t]..<offset[t] + end - start])
                    }
                    continue
                }
                for j in start..<end {
                    let source = Int(pairing.elementSourceOf[j])
                    if source >= 0 && !pairing.elementChanged[j] {
                        elementHashes.append(head.elementHashes[source])
                    } else {
                        elementHashes.append(placeholder)
                        pending.append(j)
                    }
                }
            }
            let pendingIndices = pending
            let (computed, pendingFailure) = _ContentHashing.hashes(of: target, count: pending.count) { k in
                let j = pendingIndices[k]
                let t = DiffPairing.section(containing: j, starts: targetStart)
                return (t, j - targetStart[t])
            }
            for (k, j) in pending.enumerated() { elementHashes[j] = computed[k] }
            let failures = [pendingFailure.map { (index: pending[$0.index], error: $0.error) }, failure].compactMap { $0 }
            if let first = failures.min(by: { $0.index < $1.index }) { throw first.error }
            return (sectionHashes, elementHashes)
        }
    }
}
