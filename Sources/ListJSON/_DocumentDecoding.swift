import ListDiff

/// Shared decoding steps for snapshot documents and stage objects. Each step reports errors relative
/// to the value it reads; `at` puts the step's place in front of the path on the way out, so paths
/// are only built when something is wrong. Package-visible: ListMerge decodes its intents and
/// conflicts with the same steps.
package enum _Decode {
    /// Runs `body`, prefixing the path of any error with `component`.
    @inline(__always)
    package static func at<T>(
        _ component: DocumentError.PathComponent, _ body: () throws(DocumentError) -> T
    ) throws(DocumentError) -> T {
        do {
            return try body()
        } catch {
            throw error.prefixed(component)
        }
    }

    package static func object(_ value: JSONValue) throws(DocumentError) -> JSONObject {
        guard case .object(let object) = value else {
            throw DocumentError(.typeMismatch(expected: "an object", found: value.kindName))
        }
        return object
    }

    package static func array(_ value: JSONValue) throws(DocumentError) -> [JSONValue] {
        guard case .array(let array) = value else {
            throw DocumentError(.typeMismatch(expected: "an array", found: value.kindName))
        }
        return array
    }

    package static func string(_ value: JSONValue) throws(DocumentError) -> String {
        guard case .string(let string) = value else {
            throw DocumentError(.typeMismatch(expected: "a string", found: value.kindName))
        }
        return string
    }

    /// A non-negative integer that fits `Int`, written without fraction or exponent.
    package static func index(_ value: JSONValue) throws(DocumentError) -> Int {
        guard case .number(let number) = value else {
            throw DocumentError(.typeMismatch(expected: "a non-negative integer", found: value.kindName))
        }
        guard let index = number.intValue, index >= 0 else {
            throw DocumentError(.invalidValue("expected a non-negative integer, found \(number.literal)"))
        }
        return index
    }

    /// The value of a required key, decoded by `decode`; errors name the key.
    @inline(__always)
    package static func required<T>(
        _ object: JSONObject, _ key: String, _ decode: (JSONValue) throws(DocumentError) -> T
    ) throws(DocumentError) -> T {
        guard let value = object[key] else { throw DocumentError(.missing, path: [.key(key)]) }
        return try at(.key(key)) { () throws(DocumentError) -> T in try decode(value) }
    }

    /// The value of an optional key decoded by `decode`, or `nil` when the key is absent.
    @inline(__always)
    package static func optional<T>(
        _ object: JSONObject, _ key: String, _ decode: (JSONValue) throws(DocumentError) -> T
    ) throws(DocumentError) -> T? {
        guard let value = object[key] else { return nil }
        return try at(.key(key)) { () throws(DocumentError) -> T in try decode(value) }
    }

    /// Each element of an array decoded by `decode`; errors name the index.
    @inline(__always)
    package static func each<T>(
        _ array: [JSONValue], _ decode: (JSONValue) throws(DocumentError) -> T
    ) throws(DocumentError) -> [T] {
        var result: [T] = []
        result.reserveCapacity(array.count)
        for (i, value) in array.enumerated() {
            result.append(try at(.index(i)) { () throws(DocumentError) -> T in try decode(value) })
        }
        return result
    }

    /// `{"section": s, "element": e}`.
    static func path(_ value: JSONValue) throws(DocumentError) -> ElementPath {
        let object = try _Decode.object(value)
        return ElementPath(
            section: try required(object, "section", index),
            element: try required(object, "element", index))
    }

    /// `{"id": …, "content": …, "elements": […]}`; `content` absent = null, `elements` absent = none.
    static func section<Item: JSONDocumentItem>(_ value: JSONValue) throws(DocumentError) -> ArraySection<Item, Item> {
        let object = try _Decode.object(value)
        let model: Item = try item(members: object)
        let elements = try optional(object, "elements") { (value) throws(DocumentError) -> [Item] in
            try each(try array(value)) { (value) throws(DocumentError) -> Item in try item(value) }
        }
        return ArraySection(model: model, elements: elements ?? [])
    }

    /// `{"id": …, "content": …}`; `content` absent = null, other keys ignored.
    static func item<Item: JSONDocumentItem>(_ value: JSONValue) throws(DocumentError) -> Item {
        try item(members: try object(value))
    }

    /// The `id` and `content` keys of an object.
    static func item<Item: JSONDocumentItem>(members object: JSONObject) throws(DocumentError) -> Item {
        Item(documentID: try required(object, "id", string), content: object["content"] ?? .null)
    }
}
