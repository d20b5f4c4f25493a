import ListDiff
import ListDiffTestSupport
import Testing

/// `DiffPairing`'s invariant check catches each way a pairing can be wrong, and the diff's own pairing
/// passes it.
@Suite(.heavyWork) struct DiffPairingTests {
    private func pairing() -> DiffPairing {
        let source = [
            ArraySection(model: TestItem("s"), elements: [TestItem("a"), TestItem("b")]),
            ArraySection(model: TestItem("gone"), elements: [TestItem("c")]),
        ]
        let target = [
            ArraySection(model: TestItem("s"), elements: [TestItem("b"), TestItem("a", 1), TestItem("d")]),
            ArraySection(model: TestItem("fresh"), elements: [TestItem("e")]),
        ]
        return StagedChangeset.changesetAndPairing(source: source, target: target).pairing
    }

    @Test func theDiffsPairingHolds() {
        let pairing = pairing()
        #expect(pairing.invariantViolation() == nil)
        #expect(pairing.sourceSection(ofTarget: 0) == 0 && pairing.sourceSection(ofTarget: 1) == nil)
        #expect(pairing.targetSection(ofSource: 1) == nil)
        #expect(pairing.sourceElement(ofTarget: 0) == 1 && pairing.sourceElement(ofTarget: 2) == nil)
        #expect(pairing.targetElement(ofSource: 2) == nil)
        #expect(pairing.elementChanged == [false, true, false, false])
        #expect(pairing.elementPlaced[2] && pairing.elementPlaced[3])
        #expect(pairing.sectionPlaced == [false, true])
        #expect(pairing.targetSection(containing: 3) == 1 && pairing.sourceSection(containing: 1) == 0)
    }

    @Test func oneWayPairsAreCaught() {
        var broken = pairing()
        broken.elementTargetOf[0] = 0  // a → b's partner, while b's partner says b
        #expect(broken.invariantViolation() != nil)
        broken = pairing()
        broken.sectionSourceOf[1] = 0
        #expect(broken.invariantViolation() != nil)
    }

    @Test func newItemsMustBePlacedAndUnchanged() {
        var broken = pairing()
        broken.elementPlaced[2] = false
        #expect(broken.invariantViolation() == "new element 2 is not placed")
        broken = pairing()
        broken.elementChanged[3] = true
        #expect(broken.invariantViolation() == "new element 3 is marked changed")
        broken = pairing()
        broken.sectionChanged[1] = true
        #expect(broken.invariantViolation() == "new section 1 is marked changed")
    }

    @Test func elementsPairOnlyWithinPairedSections() {
        var broken = pairing()
        // e (in the new section) claims c (in the deleted one).
        broken.elementSourceOf[3] = 2
        broken.elementTargetOf[2] = 3
        #expect(broken.invariantViolation() == "element 3 pairs across unpaired sections")
    }

    @Test func countsMustAgree() {
        var broken = pairing()
        broken.elementChanged.removeLast()
        #expect(broken.invariantViolation() == "the counts of sections and elements disagree")
    }
}
