/// One stage of a staged changeset: a batch update that a UI can animate safely and that a consumer
/// applies to its copy of the list.
///
/// Removals (`sectionDeleted`, `sectionMoved.from`, `elementDeleted`, `elementMoved.from`) address the
/// before-state of the stage; placements (`sectionInserted`, `sectionMoved.to`, `elementInserted`,
/// `elementMoved.to`) address its after-state. A stage that holds an update holds nothing but updates,
/// and updates address the item where it landed. No element operation addresses a section that the
/// same stage deletes, inserts, moves or updates.
///
/// Inserted and updated items carry their new value, so a stage can be applied without the target.
@frozen
public struct Stage<Model: Differentiable, Element: Differentiable> {
    /// A section placed by the stage, with all its elements.
    @frozen
    public struct SectionInsertion {
        /// Index of the section in the after-state.
        public var index: Int
        /// The inserted section.
        public var section: ArraySection<Model, Element>
        /// Creates an insertion.
        @inlinable
        public init(index: Int, section: ArraySection<Model, Element>) {
            self.index = index
            self.section = section
        }
    }

    /// A section whose content changed.
    @frozen
    public struct SectionUpdate {
        /// Index of the section (the stage does not change the shape).
        public var index: Int
        /// The new model of the section.
        public var model: Model
        /// Creates an update.
        @inlinable
        public init(index: Int, model: Model) {
            self.index = index
            self.model = model
        }
    }

    /// An element placed or changed by the stage, with its new value.
    @frozen
    public struct ElementChange {
        /// Where the element is in the after-state.
        public var path: ElementPath
        /// The element's new value.
        public var element: Element
        /// Creates a change.
        @inlinable
        public init(path: ElementPath, element: Element) {
            self.path = path
            self.element = element
        }
    }

    /// Sections removed, by before-state index.
    public var sectionDeleted: [Int] = []
    /// Sections placed with all their elements, by after-state index.
    public var sectionInserted: [SectionInsertion] = []
    /// Sections moved from a before-state index to an after-state index.
    public var sectionMoved: [Move<Int>] = []
    /// Sections whose content changed.
    public var sectionUpdated: [SectionUpdate] = []
    /// Elements removed, by before-state path.
    public var elementDeleted: [ElementPath] = []
    /// Elements placed, by after-state path.
    public var elementInserted: [ElementChange] = []
    /// Elements moved from a before-state path to an after-state path (possibly another section).
    public var elementMoved: [Move<ElementPath>] = []
    /// Elements whose content changed, addressed where they are.
    public var elementUpdated: [ElementChange] = []

    /// Creates an empty stage.
    @inlinable
    public init() {}

    /// Whether the stage holds no operation.
    @inlinable
    public var isEmpty: Bool { changeCount == 0 }

    /// The number of operations in the stage.
    @inlinable
    public var changeCount: Int {
        sectionDeleted.count + sectionInserted.count + sectionMoved.count + sectionUpdated.count
            + elementDeleted.count + elementInserted.count + elementMoved.count + elementUpdated.count
    }

    /// The number of each kind of operation in the stage.
    @inlinable
    public var counts: ChangeCounts {
        ChangeCounts(
            sectionDeleted: sectionDeleted.count, sectionInserted: sectionInserted.count,
            sectionMoved: sectionMoved.count, sectionUpdated: sectionUpdated.count,
            elementDeleted: elementDeleted.count, elementInserted: elementInserted.count,
            elementMoved: elementMoved.count, elementUpdated: elementUpdated.count)
    }
}

extension Stage.SectionInsertion: Sendable where Model: Sendable, Element: Sendable {}
extension Stage.SectionUpdate: Sendable where Model: Sendable {}
extension Stage.ElementChange: Sendable where Element: Sendable {}
extension Stage: Sendable where Model: Sendable, Element: Sendable {}
extension Stage.SectionInsertion: Equatable where Model: Equatable, Element: Equatable {}
extension Stage.SectionUpdate: Equatable where Model: Equatable {}
extension Stage.ElementChange: Equatable where Element: Equatable {}
extension Stage: Equatable where Model: Equatable, Element: Equatable {}

/// How many operations of each kind a stage or a changeset holds.
@frozen
public struct ChangeCounts: Hashable, Sendable {
    public var sectionDeleted = 0
    public var sectionInserted = 0
    public var sectionMoved = 0
    public var sectionUpdated = 0
    public var elementDeleted = 0
    public var elementInserted = 0
    public var elementMoved = 0
    public var elementUpdated = 0

    /// Creates counts.
    @inlinable
    public init(
        sectionDeleted: Int = 0, sectionInserted: Int = 0, sectionMoved: Int = 0, sectionUpdated: Int = 0,
        elementDeleted: Int = 0, elementInserted: Int = 0, elementMoved: Int = 0, elementUpdated: Int = 0
    ) {
        self.sectionDeleted = sectionDeleted
        self.sectionInserted = sectionInserted
        self.sectionMoved = sectionMoved
        self.sectionUpdated = sectionUpdated
        self.elementDeleted = elementDeleted
        self.elementInserted = elementInserted
        self.elementMoved = elementMoved
        self.elementUpdated = elementUpdated
    }

    /// The number of operations of all kinds.
    @inlinable
    public var total: Int {
        sectionDeleted + sectionInserted + sectionMoved + sectionUpdated
            + elementDeleted + elementInserted + elementMoved + elementUpdated
    }

    /// Adds counts kind by kind.
    @inlinable
    public static func + (lhs: ChangeCounts, rhs: ChangeCounts) -> ChangeCounts {
        ChangeCounts(
            sectionDeleted: lhs.sectionDeleted + rhs.sectionDeleted,
            sectionInserted: lhs.sectionInserted + rhs.sectionInserted,
            sectionMoved: lhs.sectionMoved + rhs.sectionMoved,
            sectionUpdated: lhs.sectionUpdated + rhs.sectionUpdated,
            elementDeleted: lhs.elementDeleted + rhs.elementDeleted,
            elementInserted: lhs.elementInserted + rhs.elementInserted,
            elementMoved: lhs.elementMoved + rhs.elementMoved,
            elementUpdated: lhs.elementUpdated + rhs.elementUpdated)
    }
}
