import ListDiff
import ListDiffTestSupport
import Testing

/// The cases that staged diffs are known to get wrong, each checked against the independent validator
/// and, where the answer is small, against the exact expected stages.
@Suite(.heavyWork) struct KnownHardCaseTests {
    typealias Section = ArraySection<TestItem, TestItem>

    private func section(_ id: String, _ content: Int = 0, _ elements: [TestItem]) -> Section {
        ArraySection(model: TestItem(id, content), elements: elements)
    }

    private func items(_ ids: String...) -> [TestItem] { ids.map { TestItem($0) } }

    @discardableResult
    private func validated(_ source: TestSnapshot, _ target: TestSnapshot) throws -> StagedChangeset<TestItem, TestItem> {
        let changeset = StagedChangeset(source: source, target: target)
        try BatchUpdateValidator.validate(changeset, source: source, target: target)
        #expect(try changeset.apply(to: source) == target)
        return changeset
    }

    @Test func smallLinearChangeIsOneStageWithExactOperations() throws {
        let changeset = StagedChangeset(source: items("a", "b", "c"), target: items("c", "a", "d"))
        #expect(changeset.count == 1)
        let stage = try #require(changeset.first)
        #expect(stage.elementDeleted == [ElementPath(section: 0, element: 1)])
        #expect(stage.elementMoved == [Move(from: ElementPath(section: 0, element: 2), to: ElementPath(section: 0, element: 0))])
        #expect(stage.elementInserted.map(\.path) == [ElementPath(section: 0, element: 2)])
        #expect(stage.elementInserted.map(\.element) == [TestItem("d")])
    }

    @Test func elementMovedAndUpdatedIsRefreshedWhereItLands() throws {
        let source = [TestItem("a"), TestItem("b"), TestItem("c", 1)]
        let target = [TestItem("c", 2), TestItem("a"), TestItem("b")]
        let changeset = StagedChangeset(source: source, target: target)
        #expect(changeset.count == 2)
        #expect(changeset[0].elementMoved == [Move(from: ElementPath(section: 0, element: 2), to: ElementPath(section: 0, element: 0))])
        #expect(changeset[1].elementUpdated.map(\.path) == [ElementPath(section: 0, element: 0)])
        #expect(changeset[1].elementUpdated.map(\.element) == [TestItem("c", 2)])
        #expect(try changeset.apply(to: source) == target)
    }

    @Test func sectionUpdatedWhileItsRowsMoveAndChange() throws {
        let source = [section("s", 0, [TestItem("a"), TestItem("b"), TestItem("c")]), section("t", 0, items("x"))]
        let target = [section("s", 1, [TestItem("c", 5), TestItem("a"), TestItem("b")]), section("t", 0, [TestItem("x", 1)])]
        let changeset = try validated(source, target)
        // Moves first; then the section update with element updates of other sections; then the
        // element updates inside the updated section.
        #expect(changeset.count == 3)
        #expect(changeset[1].sectionUpdated.map(\.index) == [0])
        #expect(changeset[1].elementUpdated.map(\.path) == [ElementPath(section: 1, element: 0)])
        #expect(changeset[2].elementUpdated.map(\.path) == [ElementPath(section: 0, element: 0)])
    }

    @Test func elementsLeavingADeletedSectionAreReinsertedElsewhere() throws {
        let source = [section("gone", 0, items("a", "b")), section("kept", 0, items("c"))]
        let target = [section("kept", 0, items("c", "a"))]
        let changeset = try validated(source, target)
        #expect(changeset.counts == ChangeCounts(sectionDeleted: 1, elementInserted: 1))
    }

    @Test func elementsMovingIntoAnInsertedSectionTravelWithIt() throws {
        let source = [section("kept", 0, items("a", "b"))]
        let target = [section("new", 0, items("b")), section("kept", 0, items("a"))]
        let changeset = try validated(source, target)
        #expect(changeset.counts == ChangeCounts(sectionInserted: 1, elementDeleted: 1))
        #expect(changeset[0].sectionInserted.first?.section == target[0])
    }

    @Test func everythingDeleted() throws {
        let source = [section("a", 0, items("1", "2")), section("b", 0, items("3"))]
        let changeset = try validated(source, [])
        #expect(changeset.counts == ChangeCounts(sectionDeleted: 2))
        let linear = StagedChangeset(source: items("1", "2", "3"), target: [])
        #expect(linear.counts == ChangeCounts(elementDeleted: 3))
        #expect(try linear.apply(to: items("1", "2", "3")) == [])
    }

    @Test func everythingInserted() throws {
        let target = [section("a", 0, items("1", "2")), section("b", 0, [])]
        let changeset = try validated([], target)
        #expect(changeset.counts == ChangeCounts(sectionInserted: 2))
        let linear = StagedChangeset(source: [], target: items("1", "2", "3"))
        #expect(linear.counts == ChangeCounts(elementInserted: 3))
    }

    @Test func reversingAListMovesAllButOne() throws {
        let source = (0..<50).map { TestItem("e\($0)") }
        let target = Array(source.reversed())
        let changeset = StagedChangeset(source: source, target: target)
        #expect(changeset.counts == ChangeCounts(elementMoved: 49))
        #expect(try changeset.apply(to: source) == target)
        let sections = (0..<8).map { section("s\($0)", 0, items("x\($0)")) }
        #expect(try validated(sections, sections.reversed()).counts == ChangeCounts(sectionMoved: 7))
    }

    @Test func sectionMovesKeepElementOperationsOutOfThatStage() throws {
        let source = [section("a", 0, items("1", "2", "3")), section("b", 0, items("4", "5")), section("c", 0, [])]
        let target = [section("c", 0, items("2")), section("a", 0, items("3", "1", "9")), section("b", 0, items("5"))]
        let changeset = try validated(source, target)
        for stage in changeset where !stage.sectionMoved.isEmpty {
            #expect(stage.elementDeleted.isEmpty && stage.elementInserted.isEmpty && stage.elementMoved.isEmpty)
        }
        #expect(changeset.counts == MinimalCounts.of(source: source, target: target))
    }

    @Test func duplicateIdentifiersArePairedFirstInFirstOut() throws {
        let source = [TestItem("a", 1), TestItem("a", 2), TestItem("b")]
        let target = [TestItem("b"), TestItem("a", 1), TestItem("a", 3), TestItem("a", 4)]
        let changeset = StagedChangeset(source: source, target: target)
        #expect(try changeset.apply(to: source) == target)
        #expect(changeset.counts.elementInserted == 1)
        #expect(changeset.counts.elementUpdated == 1)
    }

    @Test func emptySectionsAndUnusualIdentifiers() throws {
        let source = [section("", 0, []), section("日本", 0, items("a\u{0}b", "🙂")), section("é", 0, [])]
        let target = [section("é", 0, items("🙂")), section("", 0, []), section("日本", 0, items("a\u{0}b"))]
        try validated(source, target)
    }
}
