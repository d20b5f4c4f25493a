import ListDiff

/// The snapshot document (the repository's `Docs/Formats.md`): a sectioned list of JSON items.
///
/// ```json
/// {"sections": [
///   {"id": "today", "content": {"title": "Today"},
///    "elements": [{"id": "m1", "content": {"text": "hi"}}, {"id": "m2"}]}
/// ]}
/// ```
/// On input, `sections` is required; in a section and in an element `id` is required and must be a
/// string, `content` is optional (absent = `null`); a section's `elements` is optional (absent = none);
/// unknown keys anywhere are ignored. On output every key is written, in canonical order.
///
/// ```swift
/// let document = try SnapshotDocument(decoding: JSONValue(parsing: bytes))
/// let output = document.jsonValue(extraFields: ["schemaVersion": 1, "list": "inbox"])
/// print(output.serialized())
/// ```
public struct SnapshotDocument: Hashable, Sendable {
    /// The sections, in order, each with its elements.
    public var sections: [JSONSection]

    /// Creates a document holding `sections`.
    public init(sections: [JSONSection]) {
        self.sections = sections
    }

    /// Decodes a snapshot document.
    ///
    /// - Throws: `DocumentError` naming the place of the first problem, e.g.
    ///   `sections[2].elements[5].id: expected a string, found number`, `sections: required but missing`,
    ///   or `top level: expected an object, found array`.
    /// - Complexity: O(n) in the number of sections and elements (contents are shared, not copied).
    public init(decoding value: JSONValue) throws(DocumentError) {
        sections = try SnapshotDocument.sections(decoding: value)
    }

    /// Decodes the sections of a snapshot document straight into items of any `JSONDocumentItem` type.
    ///
    /// - Throws: `DocumentError` as `init(decoding:)`.
    /// - Complexity: O(n) in the number of sections and elements.
    public static func sections<Item: JSONDocumentItem>(decoding value: JSONValue) throws(DocumentError)
        -> [ArraySection<Item, Item>]
    {
        let object = try _Decode.object(value)
        return try _Decode.required(object, "sections") { (value) throws(DocumentError) -> [ArraySection<Item, Item>] in
            try _Decode.each(try _Decode.array(value)) { (value) throws(DocumentError) -> ArraySection<Item, Item> in
                try _Decode.section(value)
            }
        }
    }

    /// The document as a JSON object `{"sections": […]}`, plus `extraFields` (such as `schemaVersion`,
    /// `list`, `version`, `digest`); a `sections` key in `extraFields` is replaced.
    ///
    /// - Complexity: O(n) in the number of sections and elements, plus O(k log k) for k extra fields.
    public func jsonValue(extraFields: JSONObject = JSONObject()) -> JSONValue {
        var object = extraFields
        object["sections"] = SnapshotDocument.sectionsValue(sections)
        return .object(object)
    }

    /// The canonical JSON text of `jsonValue(extraFields:)`, written straight from the sections
    /// without building the intermediate `JSONValue` (faster and leaner for large lists).
    ///
    /// ```swift
    /// let bytes = document.serializedBytes(extraFields: ["schemaVersion": 1, "list": "inbox"])
    /// ```
    /// - Complexity: O(size of the output).
    public func serializedBytes(extraFields: JSONObject = JSONObject()) -> [UInt8] {
        var output: [UInt8] = []
        serialize(into: &output, extraFields: extraFields)
        return output
    }

    /// Appends the canonical JSON text of `jsonValue(extraFields:)` to `output` (see
    /// `serializedBytes(extraFields:)`).
    /// - Complexity: O(size of the output), amortised.
    public func serialize(into output: inout [UInt8], extraFields: JSONObject = JSONObject()) {
        var writer = JSONWriter()
        swap(&writer.bytes, &output)
        writer.object { w in w.members(of: extraFields, adding: "sections") { w in w.sections(sections) } }
        swap(&writer.bytes, &output)
    }

    /// The `sections` array of a document: `[{"content": …, "elements": [{"content": …, "id": …}],
    /// "id": …}]`.
    /// - Complexity: O(n) in the number of sections and elements.
    public static func sectionsValue(_ sections: [JSONSection]) -> JSONValue {
        var writer = JSONWriter()
        writer.sections(sections)
        return writer.parsedValue
    }

    /// One section as `{"content": …, "elements": […], "id": …}`.
    public static func sectionValue(_ section: JSONSection) -> JSONValue {
        var writer = JSONWriter()
        writer.object { w in w.sectionMembers(section) }
        return writer.parsedValue
    }

    /// Decodes one section `{"id": …, "content": …, "elements": […]}`.
    /// - Throws: `DocumentError` with a path relative to `value`, e.g. `elements[5].id`.
    public static func section(decoding value: JSONValue) throws(DocumentError) -> JSONSection {
        try _Decode.section(value) as JSONSection
    }
}
