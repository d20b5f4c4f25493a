import ListDiff
import ListJSON
import ListMerge
import ListDiffTestSupport
import Testing

/// One test per merge rule (ListMerge's "Offline Writes and Conflicts", "The rules"), each with the
/// merged list spelled out.
@Suite(.heavyWork) struct RebaseRuleTests {
    // MARK: Rule 1: placement

    @Test func anInsertGoesRightAfterItsAfterAnchor() {
        let result = merge(base: "s: a b c", mine: "s: a b x c", theirs: "s: a t b c")
        #expect(describe(result.snapshot) == "s: a t b x c")
        #expect(result.conflicts.isEmpty)
    }

    @Test func ofTwoConcurrentInsertsAtOnePlaceMineComesFirst() {
        let result = merge(base: "s: a b", mine: "s: a x b", theirs: "s: a t b")
        #expect(describe(result.snapshot) == "s: a x t b")
    }

    @Test func anInsertAtTheStartStaysAtTheStart() {
        let result = merge(base: "s: a b", mine: "s: x a b", theirs: "s: t a b")
        #expect(describe(result.snapshot) == "s: x t a b")
    }

    @Test func anInsertAtTheEndGoesRightAfterItsAnchorBeforeWhatTheirsAppended() {
        let result = merge(base: "s: a b", mine: "s: a b x", theirs: "s: a b t")
        #expect(describe(result.snapshot) == "s: a b x t")
    }

    @Test func aRunOfInsertsStaysTogether() {
        let result = merge(base: "s: a b", mine: "s: a x y z b", theirs: "s: a t b")
        #expect(describe(result.snapshot) == "s: a x y z t b")
    }

    @Test func anInsertWhoseAfterAnchorTheirsDeletedGoesBeforeItsBeforeAnchor() {
        let result = merge(base: "s: a b c", mine: "s: a x b c", theirs: "s: t b c")
        #expect(describe(result.snapshot) == "s: t x b c")
        #expect(result.conflicts.isEmpty)
    }

    @Test func anInsertWhoseAfterAnchorLeftTheSectionGoesBeforeItsBeforeAnchor() {
        let result = merge(base: "s: a b c | r: d", mine: "s: a x b c | r: d", theirs: "s: b c | r: d a")
        #expect(describe(result.snapshot) == "s: x b c | r: d a")
    }

    @Test func anInsertWhoseAnchorsAreBothGoneGoesToTheEnd() {
        let result = merge(base: "s: a b c", mine: "s: a x b c", theirs: "s: c")
        #expect(describe(result.snapshot) == "s: c x")
    }

    @Test func aSectionInsertIsPlacedByItsSectionAnchors() {
        let result = merge(base: "s1: a | s2: b", mine: "s1: a | n: x | s2: b", theirs: "s2: b | s1: a")
        #expect(describe(result.snapshot) == "s2: b | s1: a | n: x")
    }

    // MARK: Rule 2: one identity, one item

    @Test func anElementBothSidesCreatedIsMovedAndMergedNotDuplicated() {
        let result = merge(
            base: "s: a", mine: #"s: a x={"k":1,"m":1}"#, theirs: #"s: x={"k":2,"t":1} a"#)
        #expect(describe(result.snapshot) == #"s: a x={"k":1,"m":1,"t":1}"#)
        #expect(result.conflicts == [
            Conflict(.contentConflict, "x", section: "s", key: "k", mine: 1, theirs: 2),
        ])
    }

    @Test func aSectionBothSidesCreatedIsMergedWithTheElementsOfBoth() {
        let result = merge(base: "s: a", mine: "s: a | n: x y", theirs: "n: z | s: a")
        #expect(describe(result.snapshot) == "s: a | n: x y z")
        #expect(result.conflicts.isEmpty)
    }

    @Test func anElementOfMineInANewSectionThatTheirsHoldsIsMovedIntoIt() {
        let result = merge(base: "s: a", mine: "s: a | n: x", theirs: "s: a x")
        #expect(describe(result.snapshot) == "s: a | n: x")
    }

    @Test func anElementMineMovedIntoANewSectionKeepsTheirsChangesAndIsNotDuplicated() {
        let intents = Intent.changes(from: snap("s: a x"), to: snap("s: a | n: x=1"))
        #expect(intents == [
            .insertSection("n", content: .null, elements: [], after: "s", before: nil),
            .moveElement("x", section: "n", after: nil, before: nil),
            .updateElement("x", section: "n", base: .null, content: 1),
        ])
        let result = Rebase(intents, onto: snap(#"s: x={"t":1} a"#))
        #expect(describe(result.snapshot) == "s: a | n: x=1")
        #expect(result.conflicts == [Conflict(.contentConflict, "x", section: "n", mine: 1, theirs: ["t": 1])])
        let moved = Rebase(intents, onto: snap("r: x | s: a"))
        #expect(describe(moved.snapshot) == "r | s: a | n: x=1")
    }

    @Test func anElementTheirsSavedFromMyDeletedSectionIsMovedNotDuplicated() {
        // Mine deleted `old` and put `x` into a new section; theirs had moved `x` out of `old`.
        let result = merge(base: "old: x | s: a", mine: "s: a | new: x", theirs: "old | s: a x")
        #expect(describe(result.snapshot) == "s: a | new: x")
        #expect(result.conflicts.isEmpty)
    }

    // MARK: Rule 3: deletes win

    @Test func anUpdateOfAnElementTheirsDeletedIsDroppedAndReported() {
        let result = merge(base: "s: a b", mine: "s: a b=2", theirs: "s: a")
        #expect(describe(result.snapshot) == "s: a")
        #expect(result.conflicts == [Conflict(.deleted, "b", section: "s", mine: 2)])
    }

    @Test func aMoveOfAnElementTheirsDeletedIsDroppedAndReported() {
        let result = merge(base: "s: a b c", mine: "s: c a b", theirs: "s: a b")
        #expect(describe(result.snapshot) == "s: a b")
        #expect(result.conflicts == [Conflict(.deleted, "c", section: "s")])
    }

    @Test func anInsertIntoASectionTheirsDeletedIsDroppedAndReportedWithItsContent() {
        let result = merge(base: "s: a | r: b", mine: "s: a | r: b x=5", theirs: "s: a")
        #expect(describe(result.snapshot) == "s: a")
        #expect(result.conflicts == [Conflict(.sectionDeleted, "x", section: "r", mine: 5)])
    }

    @Test func aMoveIntoASectionTheirsDeletedIsDroppedAndTheElementStaysWhereTheirsHasIt() {
        let result = merge(base: "s: a b | r: c", mine: "s: a | r: c b", theirs: "s: b a")
        #expect(describe(result.snapshot) == "s: b a")
        #expect(result.conflicts == [Conflict(.sectionDeleted, "b", section: "r")])
    }

    @Test func anUpdateAndAMoveOfASectionTheirsDeletedAreDroppedAndReported() {
        let result = merge(base: "s: a | r: b", mine: "r=1: b | s: a", theirs: "s: a")
        #expect(describe(result.snapshot) == "s: a")
        #expect(Set(result.conflicts) == [Conflict(.deleted, "r"), Conflict(.deleted, "r", mine: 1)])
    }

    @Test func aDeleteOfAnItemAlreadyGoneDoesNothing() {
        let result = merge(base: "s: a b | r: c", mine: "s: a", theirs: "s: a | r: c")
        #expect(describe(result.snapshot) == "s: a")
        #expect(result.conflicts.isEmpty)
        let both = merge(base: "s: a b | r: c", mine: "s: a", theirs: "s: a")
        #expect(describe(both.snapshot) == "s: a")
        #expect(both.conflicts.isEmpty)
    }

    @Test func mySectionDeleteRemovesWhatTheirsPutThereAndReportsIt() {
        let result = merge(base: "s: a | r: b", mine: "s: a", theirs: "s | r: a b t=3")
        #expect(describe(result.snapshot) == "s")
        #expect(result.conflicts == [
            Conflict(.removedWithSection, "a", section: "r", theirs: .null),
            Conflict(.removedWithSection, "t", section: "r", theirs: 3),
        ])
    }

    @Test func mySectionDeleteLeavesWhatTheirsMovedOutOfIt() {
        let result = merge(base: "s: a | r: b c", mine: "s: a", theirs: "s: a c | r: b")
        #expect(describe(result.snapshot) == "s: a c")
        #expect(result.conflicts.isEmpty)
    }

    // MARK: Rule 4: three-way content merge

    @Test func keysChangedOnDifferentSidesAreBothKept() {
        let result = merge(base: #"s: a={"x":1,"y":1}"#, mine: #"s: a={"x":2,"y":1}"#, theirs: #"s: a={"x":1,"y":2}"#)
        #expect(describe(result.snapshot) == #"s: a={"x":2,"y":2}"#)
        #expect(result.conflicts.isEmpty)
    }

    @Test func aKeyBothChangedDifferentlyTakesMineAndIsReportedWithTheKey() {
        let result = merge(
            base: #"s: a={"x":1,"y":1}"#, mine: #"s: a={"x":2,"y":1}"#, theirs: #"s: a={"x":3,"y":5}"#)
        #expect(describe(result.snapshot) == #"s: a={"x":2,"y":5}"#)
        #expect(result.conflicts == [Conflict(.contentConflict, "a", section: "s", key: "x", mine: 2, theirs: 3)])
    }

    @Test func aKeyBothChangedTheSameWayIsNoConflict() {
        let result = merge(base: #"s: a={"x":1}"#, mine: #"s: a={"x":2}"#, theirs: #"s: a={"x":2,"z":0}"#)
        #expect(describe(result.snapshot) == #"s: a={"x":2,"z":0}"#)
        #expect(result.conflicts.isEmpty)
    }

    @Test func aKeyMineRemovedIsRemovedAndOneTheirsAddedIsKept() {
        let result = merge(base: #"s: a={"x":1,"y":1}"#, mine: #"s: a={"y":1}"#, theirs: #"s: a={"x":1,"y":1,"z":9}"#)
        #expect(describe(result.snapshot) == #"s: a={"y":1,"z":9}"#)
        let clash = merge(base: #"s: a={"x":1}"#, mine: #"s: a={}"#, theirs: #"s: a={"x":4}"#)
        #expect(describe(clash.snapshot) == #"s: a={}"#)
        #expect(clash.conflicts == [Conflict(.contentConflict, "a", section: "s", key: "x", theirs: 4)])
    }

    @Test func contentsThatAreNotAllObjectsTakeMineAndAreReportedWhole() {
        let result = merge(base: "s: a=1", mine: "s: a=2", theirs: "s: a=3")
        #expect(describe(result.snapshot) == "s: a=2")
        #expect(result.conflicts == [Conflict(.contentConflict, "a", section: "s", mine: 2, theirs: 3)])
        let mixed = merge(base: "s: a=1", mine: #"s: a={"x":1}"#, theirs: #"s: a={"x":2}"#)
        #expect(describe(mixed.snapshot) == #"s: a={"x":1}"#)
        #expect(mixed.conflicts == [Conflict(.contentConflict, "a", section: "s", mine: ["x": 1], theirs: ["x": 2])])
    }

    @Test func aContentOnlyTheirsChangedIsKeptWhenMineMovesTheItem() {
        let result = merge(base: "s: a b", mine: "s: b a", theirs: "s: a b=7")
        #expect(describe(result.snapshot) == "s: b=7 a")
        #expect(result.conflicts.isEmpty)
    }

    @Test func sectionContentsAreMergedKeyByKeyToo() {
        let result = merge(
            base: #"s={"t":"A","n":1}: a"#, mine: #"s={"t":"B","n":1}: a"#, theirs: #"s={"t":"C","n":2}: a"#)
        #expect(describe(result.snapshot) == #"s={"n":2,"t":"B"}: a"#)
        #expect(result.conflicts == [Conflict(.contentConflict, "s", key: "t", mine: "B", theirs: "C")])
    }

    // MARK: Rule 5: last-sequenced move wins

    @Test func myMoveWinsOverTheirsMoveOfTheSameElement() {
        let result = merge(base: "s: a b c | r: d", mine: "s: b c a | r: d", theirs: "s: b c | r: d a")
        #expect(describe(result.snapshot) == "s: b c a | r: d")
        #expect(result.conflicts.isEmpty)
    }

    @Test func myMoveWinsOverTheirsMoveOfTheSameSection() {
        let result = merge(base: "s1 | s2 | s3", mine: "s2 | s3 | s1", theirs: "s2 | s1 | s3")
        #expect(describe(result.snapshot) == "s2 | s3 | s1")
    }

    // MARK: Rule 6: repeated identifiers

    @Test func repeatedIdsAreToldApartByOrdinal() {
        let intents = Intent.changes(from: snap("s: x=1 x=2"), to: snap("s: x=1 x=3"))
        #expect(intents == [.updateElement(ItemRef("x", ordinal: 1), section: "s", base: 2, content: 3)])
        let result = Rebase(intents, onto: snap("s: y x=1 x=2"))
        #expect(describe(result.snapshot) == "s: y x=1 x=3")
        #expect(result.conflicts.isEmpty)
    }

    @Test func anAddedOccurrenceOfAnIdIsANewItemNextToTheOthers() {
        let result = merge(base: "s: x a", mine: "s: x a x=2", theirs: "s: t x a")
        #expect(describe(result.snapshot) == "s: t x a x=2")
    }

    @Test func aDeletedOccurrenceOfARepeatedIdIsTheOneMineDeleted() {
        let result = merge(base: "s: x=1 a x=2", mine: "s: x=1 a", theirs: "s: x=1 a b x=2")
        #expect(describe(result.snapshot) == "s: x=1 a b")
    }
}
