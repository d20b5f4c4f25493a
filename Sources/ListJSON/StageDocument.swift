import ListDiff

/// The stage object (described in the repository's `Docs/Formats.md`), and lists of them: encoding
/// stages of JSON snapshots and decoding them back.
///
/// ```json
/// {"sectionDeleted": [2],
///  "sectionInserted": [{"index": 0, "id": "s9", "content": null, "elements": [{"id": "e1", "content": 1}]}],
///  "sectionMoved": [{"from": 1, "to": 3}],
///  "sectionUpdated": [{"index": 1, "content": {"title": "New"}}],
///  "elementDeleted": [{"section": 0, "element": 3}],
///  "elementInserted": [{"section": 0, "element": 0, "id": "e7", "content": "x"}],
///  "elementMoved": [{"from": {"section": 0, "element": 1}, "to": {"section": 2, "element": 0}}],
///  "elementUpdated": [{"section": 1, "element": 4, "content": {"n": 2}}]}
/// ```
/// Updates carry only the new content: the id of an updated item is taken from the state the stage
/// applies to, so decoding needs that state.
///
/// ```swift
/// let changeset = StagedChangeset(source: old, target: new)
/// let json = StageDocument.encode(changeset, extraFields: ["schemaVersion": 1])
/// let (decoded, result) = try StageDocument.decodeStages(json, applyingTo: old)   // result == new
/// ```
public enum StageDocument {
    // MARK: Encoding

    /// The stage as a stage object; keys whose arrays would be empty are left out, so an empty stage
    /// gives `{}`.
    /// - Complexity: O(operations + elements of inserted sections).
    public static func encode(_ stage: JSONStage) -> JSONValue {
        var writer = JSONWriter()
        writer.stage(stage)
        return writer.parsedValue
    }

    /// The stages as a JSON array of stage objects.
    /// - Complexity: O(total operations).
    public static func encode(stages: some Sequence<JSONStage>) -> JSONValue {
        var writer = JSONWriter()
        writer.stages(stages)
        return writer.parsedValue
    }

    /// The changeset as `{"stages": […]}` plus `extraFields`; a `stages` key in `extraFields` is
    /// replaced.
    /// - Complexity: O(total operations).
    public static func encode(
        _ changeset: StagedChangeset<JSONItem, JSONItem>, extraFields: JSONObject = JSONObject()
    ) -> JSONValue {
        var writer = JSONWriter()
        writer.object { w in w.members(of: extraFields, adding: "stages") { w in w.stages(changeset.stages) } }
        return writer.parsedValue
    }

    // MARK: Decoding

    /// Decodes a stage object that applies to `state`.
    ///
    /// Every key is optional (absent = no operation of that kind); unknown keys are ignored. Inserted
    /// items need `id` and may leave out `content` (null) and, for sections, `elements` (none). The id of
    /// an updated item is looked up where the update points: in `state`, since updates live in
    /// update-only stages — or, for a stage that mixes updates with other operations, in the state left
    /// by its other operations. The stage itself is not applied or checked beyond that.
    ///
    /// - Throws: `DocumentError` naming the place, e.g. `elementMoved[3].to.section: expected a
    ///   non-negative integer, found string`, or `sectionUpdated[0].index: section 7 is out of range
    ///   (the state has 3 sections)`; `.stageNotApplicable` when the structural part of a mixed stage
    ///   does not fit `state`.
    /// - Complexity: O(operations + elements of inserted sections), plus one application of the
    ///   structural part for a mixed stage.
    public static func decodeStage<Item: JSONDocumentItem>(
        _ value: JSONValue, applyingTo state: [ArraySection<Item, Item>]
    ) throws(DocumentError) -> Stage<Item, Item> {
        try _decodeStage(value, applyingTo: state)
    }

    /// `state` nil: updated items get an empty id, for the caller to merge with the items they
    /// update (see `_decodeStagesWithoutIDs`).
    static func _decodeStage<Item: JSONDocumentItem>(
        _ value: JSONValue, applyingTo state: [ArraySection<Item, Item>]?
    ) throws(DocumentError) -> Stage<Item, Item> {
        typealias ItemStage = Stage<Item, Item>
        let object = try _Decode.object(value)
        var stage = ItemStage()
        typealias D = _Decode
        func list<T>(_ key: String, _ decode: (JSONValue) throws(DocumentError) -> T) throws(DocumentError) -> [T] {
            try D.optional(object, key) { (value) throws(DocumentError) -> [T] in try D.each(try D.array(value), decode) }
                ?? []
        }
        stage.sectionDeleted = try list("sectionDeleted", D.index)
        stage.sectionInserted = try list("sectionInserted") { (value) throws(DocumentError) -> ItemStage.SectionInsertion in
            let index = try D.required(try D.object(value), "index", D.index)
            return ItemStage.SectionInsertion(index: index, section: try D.section(value))
        }
        stage.sectionMoved = try list("sectionMoved") { (value) throws(DocumentError) -> Move<Int> in
            let object = try D.object(value)
            return Move(from: try D.required(object, "from", D.index), to: try D.required(object, "to", D.index))
        }
        stage.elementDeleted = try list("elementDeleted", D.path)
        stage.elementInserted = try list("elementInserted") { (value) throws(DocumentError) -> ItemStage.ElementChange in
            ItemStage.ElementChange(path: try D.path(value), element: try D.item(value))
        }
        stage.elementMoved = try list("elementMoved") { (value) throws(DocumentError) -> Move<ElementPath> in
            let object = try D.object(value)
            return Move(from: try D.required(object, "from", D.path), to: try D.required(object, "to", D.path))
        }
        let sectionUpdates = try list("sectionUpdated") { (value) throws(DocumentError) -> (Int, JSONValue) in
            let object = try D.object(value)
            return (try D.required(object, "index", D.index), object["content"] ?? .null)
        }
        let elementUpdates = try list("elementUpdated") { (value) throws(DocumentError) -> (ElementPath, JSONValue) in
            (try D.path(value), try D.object(value)["content"] ?? .null)
        }
        guard !sectionUpdates.isEmpty || !elementUpdates.isEmpty else { return stage }
        guard let state else {
            stage.sectionUpdated = sectionUpdates.map { .init(index: $0.0, model: Item(documentID: "", content: $0.1)) }
            stage.elementUpdated = elementUpdates.map { .init(path: $0.0, element: Item(documentID: "", content: $0.1)) }
            return stage
        }

        // Ids of updated items: where the updates point, after the stage's other operations.
        var lookup = state
        if !stage.isEmpty {
            do {
                lookup = try stage.apply(to: state)
            } catch {
                throw DocumentError(.stageNotApplicable(error))
            }
        }
        for (k, (index, content)) in sectionUpdates.enumerated() {
            guard index < lookup.count else {
                throw DocumentError(
                    .invalidValue("section \(index) is out of range (the state has \(lookup.count) sections)"),
                    path: [.key("sectionUpdated"), .index(k), .key("index")])
            }
            stage.sectionUpdated.append(
                .init(index: index, model: Item(documentID: lookup[index].model.documentID, content: content)))
        }
        for (k, (path, content)) in elementUpdates.enumerated() {
            guard path.section < lookup.count else {
                throw DocumentError(
                    .invalidValue("section \(path.section) is out of range (the state has \(lookup.count) sections)"),
                    path: [.key("elementUpdated"), .index(k), .key("section")])
            }
            let elements = lookup[path.section].elements
            guard path.element < elements.count else {
                throw DocumentError(
                    .invalidValue(
                        "element \(path.element) is out of range (section \(path.section) has \(elements.count) elements)"),
                    path: [.key("elementUpdated"), .index(k), .key("element")])
            }
            stage.elementUpdated.append(
                .init(path: path, element: Item(documentID: elements[path.element].documentID, content: content)))
        }
        return stage
    }

    /// Decodes a stage object of a JSON snapshot; see the generic `decodeStage(_:applyingTo:)`.
    /// - Throws: `DocumentError`, as the generic version.
    public static func decodeStage(_ value: JSONValue, applyingTo state: [JSONSection]) throws(DocumentError) -> JSONStage {
        try _decodeStage(value, applyingTo: state)
    }

    /// Decodes stages of a JSON snapshot; see the generic `decodeStages(_:applyingTo:)`.
    /// - Throws: `DocumentError`, as the generic version.
    public static func decodeStages(_ value: JSONValue, applyingTo state: [JSONSection]) throws(DocumentError)
        -> (changeset: StagedChangeset<JSONItem, JSONItem>, result: [JSONSection])
    {
        try _decodeStages(value, applyingTo: state)
    }

    /// Decodes a list of stages — `{"stages": […]}` (other keys ignored) or a bare array of stage
    /// objects — applying them one after another from `state`.
    ///
    /// ```swift
    /// let (changeset, replica) = try StageDocument.decodeStages(entry, applyingTo: replica)
    /// ```
    /// - Returns: the decoded changeset and the state after its last stage.
    /// - Throws: `DocumentError` naming the place, e.g. `stages[2].elementUpdated[0].element: …`, or
    ///   `stages[2]: stage does not apply: …` when a stage does not fit the state left by the previous.
    /// - Complexity: O(total operations + stages × sections + elements of touched sections).
    public static func decodeStages<Item: JSONDocumentItem>(
        _ value: JSONValue, applyingTo state: [ArraySection<Item, Item>]
    ) throws(DocumentError) -> (changeset: StagedChangeset<Item, Item>, result: [ArraySection<Item, Item>]) {
        try _decodeStages(value, applyingTo: state)
    }

    /// Decodes a list of stages (as `decodeStages`) without a state to apply them to: updated items
    /// carry their new content under an empty id, so the caller must give them the id of the item
    /// they update as it applies them (`StagedChangeset.replay(on:mergeModel:merge:)` does).
    ///
    /// Not API (package-visible: a replica decodes its source's journal this way and applies the
    /// stages once, to its own head).
    /// - Throws: `DocumentError` naming the place.
    /// - Complexity: O(total operations + elements of inserted sections).
    package static func _decodeStagesWithoutIDs<Item: JSONDocumentItem>(
        _ value: JSONValue, as: Item.Type
    ) throws(DocumentError) -> StagedChangeset<Item, Item> {
        let (list, prefix) = try stageList(value)
        var stages: [Stage<Item, Item>] = []
        stages.reserveCapacity(list.count)
        do throws(DocumentError) {
            for (i, item) in list.enumerated() {
                try _Decode.at(.index(i)) { () throws(DocumentError) in
                    stages.append(try _decodeStage(item, applyingTo: nil as [ArraySection<Item, Item>]?))
                }
            }
        } catch {
            throw prefix.map { error.prefixed($0) } ?? error
        }
        return StagedChangeset(stages: stages)
    }

    /// The stage objects of `{"stages": […]}` or of a bare array, and the path prefix of the first.
    private static func stageList(_ value: JSONValue) throws(DocumentError) -> ([JSONValue], DocumentError.PathComponent?) {
        if case .array(let array) = value { return (array, nil) }
        return (try _Decode.required(try _Decode.object(value), "stages", _Decode.array), .key("stages"))
    }

    static func _decodeStages<Item: JSONDocumentItem>(
        _ value: JSONValue, applyingTo state: [ArraySection<Item, Item>]
    ) throws(DocumentError) -> (changeset: StagedChangeset<Item, Item>, result: [ArraySection<Item, Item>]) {
        let (list, prefix) = try stageList(value)
        var stages: [Stage<Item, Item>] = []
        stages.reserveCapacity(list.count)
        var current = state
        do throws(DocumentError) {
            for (i, item) in list.enumerated() {
                try _Decode.at(.index(i)) { () throws(DocumentError) in
                    let stage = try _decodeStage(item, applyingTo: current)
                    do throws(StageApplicationError) {
                        current = try stage.apply(to: current)
                    } catch {
                        throw DocumentError(.stageNotApplicable(error))
                    }
                    stages.append(stage)
                }
            }
        } catch {
            throw prefix.map { error.prefixed($0) } ?? error
        }
        return (StagedChangeset(stages: stages), current)
    }
}
