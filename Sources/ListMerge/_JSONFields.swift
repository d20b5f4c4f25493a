import ListJSON

/// Reading and writing the members of intent and conflict objects: ids with their ordinals, optional
/// values. Errors are `DocumentError`s whose path is relative to the object being read.
enum _JSONFields {
    /// Runs `body`, putting `component` in front of the path of any error.
    static func at<T>(
        _ component: DocumentError.PathComponent, _ body: () throws(DocumentError) -> T
    ) throws(DocumentError) -> T {
        do {
            return try body()
        } catch {
            throw DocumentError(error.reason, path: [component] + error.path)
        }
    }

    static func object(_ value: JSONValue) throws(DocumentError) -> JSONObject {
        guard case .object(let object) = value else {
            throw DocumentError(.typeMismatch(expected: "an object", found: value.kindName))
        }
        return object
    }

    static func array(_ value: JSONValue) throws(DocumentError) -> [JSONValue] {
        guard case .array(let array) = value else {
            throw DocumentError(.typeMismatch(expected: "an array", found: value.kindName))
        }
        return array
    }

    /// The string under `key`, which must be present.
    static func string(_ object: JSONObject, _ key: String) throws(DocumentError) -> String {
        guard let value = object[key] else { throw DocumentError(.missing, path: [.key(key)]) }
        guard case .string(let string) = value else {
            throw DocumentError(.typeMismatch(expected: "a string", found: value.kindName), path: [.key(key)])
        }
        return string
    }

    /// The string under `key`, or `nil` when the key is absent or `null`.
    static func optionalString(_ object: JSONObject, _ key: String) throws(DocumentError) -> String? {
        guard let value = object[key], !value.isNull else { return nil }
        return try string(object, key)
    }

    /// The non-negative integer under `key`, or 0 when the key is absent.
    static func ordinal(_ object: JSONObject, _ key: String) throws(DocumentError) -> Int {
        guard let value = object[key] else { return 0 }
        guard case .number(let number) = value else {
            throw DocumentError(
                .typeMismatch(expected: "a non-negative integer", found: value.kindName), path: [.key(key)])
        }
        guard let ordinal = number.intValue, ordinal >= 0 else {
            throw DocumentError(
                .invalidValue("expected a non-negative integer, found \(number.literal)"), path: [.key(key)])
        }
        return ordinal
    }

    /// The reference written as `key` (the id) and `key + "Ordinal"` (absent when 0); for `id`, the
    /// ordinal key is `ordinal`.
    static func ref(_ object: JSONObject, _ key: String) throws(DocumentError) -> ItemRef {
        ItemRef(try string(object, key), ordinal: try ordinal(object, ordinalKey(key)))
    }

    /// `ref(_:_:)`, or `nil` when the id is absent or `null`.
    static func optionalRef(_ object: JSONObject, _ key: String) throws(DocumentError) -> ItemRef? {
        guard let id = try optionalString(object, key) else { return nil }
        return ItemRef(id, ordinal: try ordinal(object, ordinalKey(key)))
    }

    /// Each element of the array under `key` (absent = empty) decoded by `decode`.
    static func each<T>(
        _ object: JSONObject, _ key: String, _ decode: (JSONValue) throws(DocumentError) -> T
    ) throws(DocumentError) -> [T] {
        guard let value = object[key] else { return [] }
        return try at(.key(key)) { () throws(DocumentError) -> [T] in
            var result: [T] = []
            for (i, element) in try array(value).enumerated() {
                result.append(try at(.index(i)) { () throws(DocumentError) -> T in try decode(element) })
            }
            return result
        }
    }

    /// The key of the ordinal that goes with the id under `key`.
    static func ordinalKey(_ key: String) -> String {
        key == "id" ? "ordinal" : key + "Ordinal"
    }

    /// Writes `ref` as `key` (its id, or `null` when `ref` is nil) and its ordinal when above 0.
    static func write(_ ref: ItemRef?, as key: String, into members: inout [(String, JSONValue)]) {
        guard let ref else {
            members.append((key, .null))
            return
        }
        members.append((key, .string(ref.id)))
        if ref.ordinal > 0 { members.append((ordinalKey(key), JSONValue(ref.ordinal))) }
    }
}
