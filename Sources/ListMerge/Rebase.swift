import ListDiff
import ListJSON

/// Mine's intents replayed onto theirs (the current head), with the report of what could not be
/// honoured as written (see <doc:OfflineWritesAndConflicts>).
///
/// Section intents are applied first, then element intents, each in the given order (the order
/// `Intent.changes(from:to:)` returns). The rules:
/// 1. Placement: right after `after` if it is in the target container at that moment (`after: nil` is
///    the container's start, always there); else right before `before` if it is (`before: nil` is the
///    end); else at the container's end. A run of inserts stays together, and of two concurrent inserts
///    at one place the later-sequenced (mine) comes first.
/// 2. One identity, one item: an insert of a reference the list already holds (both sides created it,
///    or theirs saved it from a section mine deletes) moves that item and merges the contents (with no
///    base: both created it), never duplicates it. Elements of an inserted section follow this rule too.
/// 3. Deletes win: an update or move of an item theirs deleted is dropped and reported (`deleted`), an
///    insert or move into a section theirs deleted too (`sectionDeleted`); a delete of an item already
///    gone does nothing. A section delete removes the elements in it at that moment; those the intent
///    does not list (theirs put them there) are reported (`removedWithSection`).
/// 4. Content: a three-way merge against the intent's base content (`ContentMerge`); each clash is a
///    `contentConflict`, mine's value kept.
/// 5. Moves: mine's move is applied wherever theirs had put the item (last-sequenced wins).
/// 6. Repeated ids: items are named by `ItemRef`; theirs' items by their ordinal in theirs' document
///    order, as the diff pairs them.
///
/// Several change sets (an outbox) are rebased one after the other, each onto the previous result.
///
/// ```swift
/// let intents = Intent.changes(from: base, to: mine)
/// let merged = Rebase(intents, onto: head)
/// merged.snapshot          // head with mine's changes
/// merged.conflicts         // what could not be honoured as written
/// Rebase(intents, onto: base).snapshot == mine   // always
/// ```
///
/// - Complexity: O(n + m) for n sections and elements in theirs and m intents, plus the size of the
///   intents' contents and of the sections they delete: one hash per identifier to index theirs, O(1)
///   per intent to find, remove and place items in linked lists, one pass to build the result. An
///   item's own content is read once and rebuilt once, however many intents merge into it, and a
///   merge visits only the keys mine and the base hold (`ContentMerge`): a thousand one-key updates
///   of an item with a thousand keys cost a thousand keys, not a million.
public struct Rebase<Item: MergeableItem> {
    /// The merged snapshot: theirs with mine's intents applied.
    public var snapshot: [ArraySection<Item, Item>]
    /// What could not be honoured as written, in the order the intents met it.
    public var conflicts: [Conflict]

    /// Applies `intents` to `theirs` with the rules listed on the type.
    /// - Complexity: see the type.
    @inlinable
    public init(_ intents: [Intent], onto theirs: [ArraySection<Item, Item>]) {
        var rebase = _Rebasing<Item>(state: _MergeState(theirs))
        rebase.apply(intents, checking: { () throws(Never) in })
        snapshot = rebase.state.snapshot()
        conflicts = rebase.conflicts
    }

    /// Applies `intents` to `theirs` as `init(_:onto:)` does, asking `isStopped` every 1,024 intents
    /// whether to give up: a server merging a large push stops once its client has gone.
    ///
    /// ```swift
    /// let merged = try Rebase(intents, onto: head, stoppingWhen: { Task.isCancelled })
    /// ```
    /// - Throws: `CancellationError` once `isStopped` returns `true`.
    /// - Complexity: as `init(_:onto:)`, plus one call of `isStopped` per 1,024 intents.
    @inlinable
    public init(
        _ intents: [Intent], onto theirs: [ArraySection<Item, Item>], stoppingWhen isStopped: () -> Bool
    ) throws(CancellationError) {
        var rebase = _Rebasing<Item>(state: _MergeState(theirs))
        try rebase.apply(intents, checking: { () throws(CancellationError) in
            if isStopped() { throw CancellationError() }
        })
        snapshot = rebase.state.snapshot()
        conflicts = rebase.conflicts
    }
}

extension Rebase: Sendable where Item: Sendable {}
extension Rebase: Equatable where Item: Equatable {}

/// The rebase in progress: the state and the report so far.
@usableFromInline
struct _Rebasing<Item: MergeableItem> {
    @usableFromInline var state: _MergeState<Item>
    @usableFromInline var conflicts: [Conflict] = []

    @inlinable
    init(state: _MergeState<Item>) {
        self.state = state
    }

    /// Applies section intents, then element intents, each in order, calling `check` every 1,024.
    @inlinable mutating func apply<E: Error>(_ intents: [Intent], checking check: () throws(E) -> Void) throws(E) {
        var applied = 0
        for sections in [true, false] {
            for intent in intents where intent.isSectionIntent == sections {
                applied += 1
                if applied & 1023 == 0 { try check() }
                apply(intent)
            }
        }
    }

    /// Applies one intent.
    /// - Complexity: O(1) plus the contents it merges; a section delete O(elements of the section).
    @inlinable mutating func apply(_ intent: Intent) {
        switch intent {
        case .deleteSection(let ref, let known):
            guard let s = state.section(ref) else { return }
            let elements = state.elements(of: s)
            let knownHere = elements.isEmpty ? [] : Set(known)
            for e in elements {
                let element = state.elementRef(e)
                if !knownHere.contains(element) {
                    conflicts.append(Conflict(
                        .removedWithSection, element, section: ref, theirs: state.elementContent(e)))
                }
                state.removeElement(e)
            }
            state.removeSection(s)

        case .insertSection(let ref, let content, let elements, let after, let before):
            let s: Int32
            if let existing = state.section(ref) {
                state.unlinkSection(existing)
                mergeSection(existing, ref, base: nil, mine: content)
                s = existing
            } else {
                s = state.addSection(ref, content: content)
            }
            state.placeSection(s, after: after, before: before)
            for (k, element) in elements.enumerated() {
                insertElement(
                    element.ref, content: element.content, into: s, section: ref,
                    after: k > 0 ? elements[k - 1].ref : nil, before: k + 1 < elements.count ? elements[k + 1].ref : nil)
            }

        case .moveSection(let ref, let after, let before):
            guard let s = state.section(ref) else { return conflicts.append(Conflict(.deleted, ref)) }
            state.unlinkSection(s)
            state.placeSection(s, after: after, before: before)

        case .updateSection(let ref, let base, let content):
            guard let s = state.section(ref) else { return conflicts.append(Conflict(.deleted, ref, mine: content)) }
            mergeSection(s, ref, base: base, mine: content)

        case .deleteElement(let ref):
            if let e = state.element(ref) { state.removeElement(e) }

        case .insertElement(let ref, let content, let section, let after, let before):
            guard let s = state.section(section) else {
                return conflicts.append(Conflict(.sectionDeleted, ref, section: section, mine: content))
            }
            insertElement(ref, content: content, into: s, section: section, after: after, before: before)

        case .moveElement(let ref, let section, let after, let before):
            guard let e = state.element(ref) else { return conflicts.append(Conflict(.deleted, ref, section: section)) }
            guard let s = state.section(section) else {
                return conflicts.append(Conflict(.sectionDeleted, ref, section: section))
            }
            state.unlinkElement(e)
            state.placeElement(e, in: s, after: after, before: before)

        case .updateElement(let ref, let section, let base, let content):
            guard let e = state.element(ref) else {
                return conflicts.append(Conflict(.deleted, ref, section: section, mine: content))
            }
            mergeElement(e, ref, section: section, base: base, mine: content)
        }
    }

    /// Inserts an element, or moves and merges the one the list already holds under `ref` (rule 2).
    @inlinable mutating func insertElement(
        _ ref: ItemRef, content: JSONValue, into s: Int32, section: ItemRef, after: ItemRef?, before: ItemRef?
    ) {
        let e: Int32
        if let existing = state.element(ref) {
            state.unlinkElement(existing)
            mergeElement(existing, ref, section: section, base: nil, mine: content)
            e = existing
        } else {
            e = state.addElement(ref, content: content)
        }
        state.placeElement(e, in: s, after: after, before: before)
    }

    @inlinable mutating func mergeSection(_ s: Int32, _ ref: ItemRef, base: JSONValue?, mine: JSONValue) {
        let clashes = state.mergeSectionContent(s) { ContentMerge.merge(base: base, mine: mine, into: &$0) }
        report(clashes, ref, section: nil)
    }

    @inlinable mutating func mergeElement(_ e: Int32, _ ref: ItemRef, section: ItemRef, base: JSONValue?, mine: JSONValue) {
        let clashes = state.mergeElementContent(e) { ContentMerge.merge(base: base, mine: mine, into: &$0) }
        report(clashes, ref, section: section)
    }

    /// Reports the clashes of rule 4's three-way merge.
    @inlinable mutating func report(_ clashes: [ContentMerge.Clash], _ ref: ItemRef, section: ItemRef?) {
        for clash in clashes {
            conflicts.append(Conflict(
                .contentConflict, ref, section: section, key: clash.key, mine: clash.mine, theirs: clash.theirs))
        }
    }
}
