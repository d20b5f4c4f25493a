extension Stage {
    /// The same stage with its models and elements transformed: indexes, paths and moves are kept.
    /// How a stage of stored items becomes a stage of an app's own values.
    ///
    /// ```swift
    /// let typed = stage.map(model: { Folder(title: $0) }, element: { Message(text: $0) })
    /// ```
    /// - Throws: what a transform throws.
    /// - Complexity: O(operations), plus the transforms.
    public func map<NewModel: Differentiable, NewElement: Differentiable>(
        model transformModel: (Model) throws -> NewModel, element transformElement: (Element) throws -> NewElement
    ) rethrows -> Stage<NewModel, NewElement> {
        var stage = Stage<NewModel, NewElement>()
        stage.sectionDeleted = sectionDeleted
        stage.sectionInserted = try sectionInserted.map { insertion in
            .init(
                index: insertion.index,
                section: ArraySection(model: try transformModel(insertion.section.model), elements: try insertion.section.elements.map(transformElement)))
        }
        stage.sectionMoved = sectionMoved
        stage.sectionUpdated = try sectionUpdated.map { .init(index: $0.index, model: try transformModel($0.model)) }
        stage.elementDeleted = elementDeleted
        stage.elementInserted = try elementInserted.map { .init(path: $0.path, element: try transformElement($0.element)) }
        stage.elementMoved = elementMoved
        stage.elementUpdated = try elementUpdated.map { .init(path: $0.path, element: try transformElement($0.element)) }
        return stage
    }
}

extension StagedChangeset {
    /// The same changeset with its models and elements transformed, stage by stage (see
    /// `Stage.map(model:element:)`).
    /// - Throws: what a transform throws.
    /// - Complexity: O(operations), plus the transforms.
    public func map<NewModel: Differentiable, NewElement: Differentiable>(
        model transformModel: (Model) throws -> NewModel, element transformElement: (Element) throws -> NewElement
    ) rethrows -> StagedChangeset<NewModel, NewElement> {
        StagedChangeset<NewModel, NewElement>(stages: try stages.map { try $0.map(model: transformModel, element: transformElement) })
    }
}
