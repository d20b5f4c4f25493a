import ListJSON

/// The JSON form of intents: one object per intent, its operation in `op`.
///
/// | op | keys |
/// |---|---|
/// | `deleteSection` | `id`, `elements` (the section's base elements, `[{"id"}]`) |
/// | `insertSection` | `id`, `content`, `elements` (`[{"id","content"}]`), `after`, `before` |
/// | `moveSection` | `id`, `after`, `before` |
/// | `updateSection` | `id`, `base`, `content` |
/// | `deleteElement` | `id` |
/// | `insertElement` | `id`, `content`, `section`, `after`, `before` |
/// | `moveElement` | `id`, `section`, `after`, `before` |
/// | `updateElement` | `id`, `section`, `base`, `content` |
///
/// Every reference (`id`, `section`, `after`, `before`, and `id` in `elements`) is a string, followed
/// by its ordinal under `ordinal`, `sectionOrdinal`, `afterOrdinal` or `beforeOrdinal` only when it is
/// above 0. `after` and `before` are always written, `null` at an end. On input, `content`, `base`,
/// `after`, `before` and `elements` may be absent (`null`, `null`, `null`, `null`, none), ordinals may be
/// absent (0), and unknown keys are ignored.
///
/// ```swift
/// let intent = try Intent(decoding: JSONValue(parsing:
///     #"{"op":"moveElement","id":"m3","section":"today","after":"m1","before":null}"#))
/// intent == .moveElement("m3", section: "today", after: "m1", before: nil)   // true
/// ```
extension Intent {
    /// The intent as one JSON object, keys in canonical order.
    /// - Complexity: O(size of the intent's contents) plus O(k log k) for its k keys.
    public var jsonValue: JSONValue {
        var members: [(String, JSONValue)] = [("op", .string(op))]
        _JSONFields.write(ref, as: "id", into: &members)
        switch self {
        case .deleteSection(_, let elements):
            members.append(("elements", .array(elements.map(Self.referenceValue))))
        case .insertSection(_, let content, let elements, let after, let before):
            members.append(("content", content))
            members.append(("elements", .array(elements.map(Self.elementValue))))
            _JSONFields.write(after, as: "after", into: &members)
            _JSONFields.write(before, as: "before", into: &members)
        case .moveSection(_, let after, let before):
            _JSONFields.write(after, as: "after", into: &members)
            _JSONFields.write(before, as: "before", into: &members)
        case .updateSection(_, let base, let content):
            members.append(("base", base))
            members.append(("content", content))
        case .deleteElement:
            break
        case .insertElement(_, let content, let section, let after, let before):
            members.append(("content", content))
            _JSONFields.write(section, as: "section", into: &members)
            _JSONFields.write(after, as: "after", into: &members)
            _JSONFields.write(before, as: "before", into: &members)
        case .moveElement(_, let section, let after, let before):
            _JSONFields.write(section, as: "section", into: &members)
            _JSONFields.write(after, as: "after", into: &members)
            _JSONFields.write(before, as: "before", into: &members)
        case .updateElement(_, let section, let base, let content):
            _JSONFields.write(section, as: "section", into: &members)
            members.append(("base", base))
            members.append(("content", content))
        }
        return .object(JSONObject(uniqueKeysWithValues: members))
    }

    /// Decodes one intent object.
    ///
    /// - Throws: `DocumentError` with a path relative to `value`: not an object, `op` missing or not one
    ///   of the eight operations, a required reference (`id`, `section`) missing or not a string, an
    ///   ordinal that is not a non-negative integer, `elements` not an array of objects.
    /// - Complexity: O(size of the intent).
    public init(decoding value: JSONValue) throws(DocumentError) {
        let object = try _Decode.object(value)
        let op = try _JSONFields.string(object, "op")
        let ref = try _JSONFields.ref(object, "id")
        let content = object["content"] ?? .null
        let base = object["base"] ?? .null
        switch op {
        case "deleteSection":
            let elements = try _JSONFields.each(object, "elements") { (value) throws(DocumentError) -> ItemRef in
                try _JSONFields.ref(try _Decode.object(value), "id")
            }
            self = .deleteSection(ref, elements: elements)
        case "insertSection":
            let elements = try _JSONFields.each(object, "elements") { (value) throws(DocumentError) -> Element in
                let member = try _Decode.object(value)
                return Element(try _JSONFields.ref(member, "id"), content: member["content"] ?? .null)
            }
            self = .insertSection(
                ref, content: content, elements: elements,
                after: try _JSONFields.optionalRef(object, "after"), before: try _JSONFields.optionalRef(object, "before"))
        case "moveSection":
            self = .moveSection(
                ref, after: try _JSONFields.optionalRef(object, "after"),
                before: try _JSONFields.optionalRef(object, "before"))
        case "updateSection":
            self = .updateSection(ref, base: base, content: content)
        case "deleteElement":
            self = .deleteElement(ref)
        case "insertElement":
            self = .insertElement(
                ref, content: content, section: try _JSONFields.ref(object, "section"),
                after: try _JSONFields.optionalRef(object, "after"), before: try _JSONFields.optionalRef(object, "before"))
        case "moveElement":
            self = .moveElement(
                ref, section: try _JSONFields.ref(object, "section"),
                after: try _JSONFields.optionalRef(object, "after"), before: try _JSONFields.optionalRef(object, "before"))
        case "updateElement":
            self = .updateElement(ref, section: try _JSONFields.ref(object, "section"), base: base, content: content)
        default:
            throw DocumentError(.invalidValue("unknown intent operation \(JSONValue.string(op).serialized())"), path: [.key("op")])
        }
    }

    /// A list of intents as a JSON array, in order.
    /// - Complexity: O(size of the intents).
    public static func jsonValue(_ intents: [Intent]) -> JSONValue {
        .array(intents.map(\.jsonValue))
    }

    /// Decodes a JSON array of intent objects.
    /// - Throws: `DocumentError` whose path starts with the index of the first intent that does not
    ///   decode, e.g. `[3].section: required but missing`.
    /// - Complexity: O(size of the intents).
    public static func intents(decoding value: JSONValue) throws(DocumentError) -> [Intent] {
        try _Decode.each(try _Decode.array(value)) { (element) throws(DocumentError) -> Intent in
            try Intent(decoding: element)
        }
    }

    private static func referenceValue(_ ref: ItemRef) -> JSONValue {
        var members: [(String, JSONValue)] = []
        _JSONFields.write(ref, as: "id", into: &members)
        return .object(JSONObject(uniqueKeysWithValues: members))
    }

    private static func elementValue(_ element: Element) -> JSONValue {
        var members: [(String, JSONValue)] = [("content", element.content)]
        _JSONFields.write(element.ref, as: "id", into: &members)
        return .object(JSONObject(uniqueKeysWithValues: members))
    }
}
