import ListDiff
import ListDiffTestSupport
import Testing

/// `apply` refuses stages that do not fit the snapshot with a typed error instead of crashing.
@Suite(.heavyWork) struct StageApplicationTests {
    let list = [ArraySection(model: LinearSection(), elements: ["a", "b", "c"])]

    private func reason(_ stage: Stage<LinearSection, String>) -> StageApplicationError.Reason? {
        do {
            _ = try stage.apply(to: list)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test func outOfRangeRemovalIsRefused() {
        var stage = Stage<LinearSection, String>()
        stage.elementDeleted = [ElementPath(section: 0, element: 3)]
        #expect(reason(stage) == .indexOutOfRange)
        stage.elementDeleted = [ElementPath(section: 1, element: 0)]
        #expect(reason(stage) == .indexOutOfRange)
    }

    @Test func doubleRemovalIsRefused() {
        var stage = Stage<LinearSection, String>()
        stage.elementDeleted = [ElementPath(section: 0, element: 1)]
        stage.elementMoved = [Move(from: ElementPath(section: 0, element: 1), to: ElementPath(section: 0, element: 0))]
        #expect(reason(stage) == .removedTwice)
    }

    @Test func doublePlacementIsRefused() {
        var stage = Stage<LinearSection, String>()
        stage.elementInserted = [.init(path: ElementPath(section: 0, element: 0), element: "x"),
                                 .init(path: ElementPath(section: 0, element: 0), element: "y")]
        #expect(reason(stage) == .placedTwice)
    }

    @Test func placementPastTheEndIsRefused() {
        var stage = Stage<LinearSection, String>()
        stage.elementInserted = [.init(path: ElementPath(section: 0, element: 4), element: "x")]
        #expect(reason(stage) == .indexOutOfRange)
    }

    @Test func elementOperationInADeletedSectionIsRefused() {
        var stage = Stage<LinearSection, String>()
        stage.sectionDeleted = [0]
        stage.elementDeleted = [ElementPath(section: 0, element: 0)]
        #expect(reason(stage) == .sectionConflict)
    }

    @Test func errorsNameTheStage() {
        var bad = Stage<LinearSection, String>()
        bad.elementDeleted = [ElementPath(section: 0, element: 9)]
        let changeset = StagedChangeset(stages: [StagedChangeset(source: ["a", "b", "c"], target: ["c", "b", "a"]).stages[0], bad])
        #expect(throws: StageApplicationError.self) { try changeset.apply(to: list) }
        do {
            _ = try changeset.apply(to: list)
        } catch {
            #expect(error.stage == 1)
            #expect(error.description.hasPrefix("stage 2: index out of range"))
        }
    }

    @Test func forEachStageHandsOverEveryAfterState() throws {
        let source = [ArraySection(model: TestItem("s"), elements: [TestItem("a", 1), TestItem("b")])]
        let target = [ArraySection(model: TestItem("s", 1), elements: [TestItem("b"), TestItem("a", 2)])]
        let changeset = StagedChangeset(source: source, target: target)
        var seen: [TestSnapshot] = []
        let result = try changeset.forEachStage(applyingTo: source) { _, data in seen.append(data) }
        #expect(seen.count == changeset.count)
        #expect(seen.last == target)
        #expect(result == target)
    }
}
