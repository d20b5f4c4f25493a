import ListDiff
import ListJSON
import ListMerge
import ListDiffTestSupport
import Testing

/// Intents read off the diff's pairing: by identity, only the diff's minimal moves, anchors in mine.
@Suite(.heavyWork) struct IntentTests {
    @Test func equalSnapshotsGiveNoIntents() {
        #expect(Intent.changes(from: snap("s: a b | r: c"), to: snap("s: a b | r: c")).isEmpty)
    }

    @Test func everyKindOfChangeBecomesItsIntentInTheRebaseOrder() {
        let intents = Intent.changes(
            from: snap("s: a b c | gone: g | r: d"),
            to: snap("r: d=1 | s=2: c a x | n: y"))
        #expect(intents == [
            .deleteSection("gone", elements: ["g"]),
            .moveSection("r", after: nil, before: "s"),
            .updateSection("s", base: .null, content: 2),
            .insertSection("n", content: .null, elements: [Intent.Element("y")], after: "s", before: nil),
            .deleteElement("b"),
            .updateElement("d", section: "r", base: .null, content: 1),
            .moveElement("c", section: "s", after: nil, before: "a"),
            .insertElement("x", content: .null, section: "s", after: "a", before: nil),
        ])
    }

    @Test func onlyTheDisplacedItemBecomesAMove() {
        let base = snap("s: " + (0..<50).map { "e\($0)" }.joined(separator: " "))
        var elements = base[0].elements
        let moved = elements.remove(at: 10)
        elements.insert(moved, at: 40)
        let mine = [ArraySection(model: base[0].model, elements: elements)]
        #expect(Intent.changes(from: base, to: mine) == [.moveElement("e10", section: "s", after: "e40", before: "e41")])
    }

    @Test func anElementMovedToAnotherSectionIsAMoveIntoThatSection() {
        let intents = Intent.changes(from: snap("s: a b | r: c"), to: snap("s: a | r: b c"))
        #expect(intents == [.moveElement("b", section: "r", after: nil, before: "c")])
    }

    @Test func aRunOfInsertsIsAnchoredOnItself() {
        let intents = Intent.changes(from: snap("s: a b"), to: snap("s: a x y b"))
        #expect(intents == [
            .insertElement("x", content: .null, section: "s", after: "a", before: "y"),
            .insertElement("y", content: .null, section: "s", after: "x", before: "b"),
        ])
    }

    @Test func repeatedIdsGetTheOrdinalOfTheirOccurrence() {
        // Base: x#0 y x#1; mine keeps x#0, changes x#1, deletes y and adds x#2 at the end.
        let intents = Intent.changes(from: snap("s: x y x"), to: snap("s: x x=1 x"))
        #expect(intents == [
            .deleteElement("y"),
            .updateElement(ItemRef("x", ordinal: 1), section: "s", base: .null, content: 1),
            .insertElement(ItemRef("x", ordinal: 2), content: .null, section: "s", after: ItemRef("x", ordinal: 1), before: nil),
        ])
    }

    @Test func anElementAddedAfterItsSectionWasDeletedTakesTheOrdinalItLeft() {
        let intents = Intent.changes(from: snap("old: x | s: x"), to: snap("s: x | new: x"))
        #expect(intents == [
            .deleteSection("old", elements: ["x"]),
            .insertSection("new", content: .null, elements: [Intent.Element("x")], after: "s", before: nil),
        ])
    }

    @Test func intentsFromAnyPairRebuildMineFromTheBase() {
        let base = snap("s: a b c d | r: e f | q")
        let mine = snap("q: f=1 a | n: z | s: d c=2 b")
        let result = Rebase(Intent.changes(from: base, to: mine), onto: base)
        #expect(result.snapshot == mine)
        #expect(result.conflicts.isEmpty)
    }
}
