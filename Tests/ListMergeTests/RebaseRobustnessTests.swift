import ListJSON
import ListMerge
import ListDiffTestSupport
import Testing

/// Intents a source receives may be odd (decoded from a push): they never crash a rebase, and what
/// they name that is not there is reported or ignored by the same rules.
@Suite(.heavyWork) struct RebaseRobustnessTests {
    @Test func referencesToNothingAreReportedOrIgnored() {
        let result = Rebase<JSONItem>([
            .deleteElement(ItemRef("a", ordinal: Int.max)),
            .moveElement(ItemRef("a", ordinal: 1 << 40), section: "s", after: nil, before: nil),
            .updateSection("nope", base: 1, content: 2),
            .insertElement("x", content: 1, section: ItemRef("s", ordinal: 1 << 33), after: "a", before: nil),
            .deleteSection("nope", elements: []),
        ], onto: snap("s: a b"))
        #expect(describe(result.snapshot) == "s: a b")
        #expect(result.conflicts == [
            Conflict(.deleted, "nope", mine: 2),
            Conflict(.deleted, ItemRef("a", ordinal: 1 << 40), section: "s"),
            Conflict(.sectionDeleted, "x", section: ItemRef("s", ordinal: 1 << 33), mine: 1),
        ])
    }

    @Test func anItemAnchoredOnItselfAndARepeatedInsertStayOneItem() {
        let result = Rebase<JSONItem>([
            .moveElement("b", section: "s", after: "b", before: "b"),
            .insertElement("x", content: 1, section: "s", after: "a", before: nil),
            .insertElement("x", content: 1, section: "s", after: "x", before: "x"),
            .insertSection("n", content: .null, elements: [Intent.Element("y"), Intent.Element("y")], after: "n", before: nil),
        ], onto: snap("s: a b c"))
        #expect(describe(result.snapshot) == "s: a c b x=1 | n: y")
        #expect(result.conflicts.isEmpty)
    }

    @Test func elementIntentsGivenBeforeSectionIntentsStillComeAfterThem() {
        let result = Rebase<JSONItem>([
            .insertElement("x", content: .null, section: "n", after: nil, before: nil),
            .insertSection("n", content: .null, elements: [], after: "s", before: nil),
        ], onto: snap("s: a"))
        #expect(describe(result.snapshot) == "s: a | n: x")
    }
}
