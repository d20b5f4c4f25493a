import ListJSON

/// Reading and writing the members of intent and conflict objects: ids with their ordinals, optional
/// values. Errors are `DocumentError`s whose path is relative to the object being read.
enum _JSONFields {
    /// The string under `key`, which must be present.
    static func string(_ object: JSONObject, _ key: String) throws(DocumentError) -> String {
        try _Decode.required(object, key, _Decode.string)
    }

    /// The string under `key`, or `nil` when the key is absent or `null`.
    static func optionalString(_ object: JSONObject, _ key: String) throws(DocumentError) -> String? {
        guard let value = object[key], !value.isNull else { return nil }
        return try string(object, key)
    }

    /// The non-negative integer under `key`, or 0 when the key is absent.
    static func ordinal(_ object: JSONObject, _ key: String) throws(DocumentError) -> Int {
        try _Decode.optional(object, key, _Decode.index) ?? 0
    }

    /// The reference written as `key` (the id) and `key + "Ordinal"` (absent when 0); for `id`, the
    /// ordinal key is `ordinal`.
    static func ref(_ object: JSONObject, _ key: String) throws(DocumentError) -> ItemRef {
        ItemRef(try string(object, key), ordinal: try ordinal(object, ordinalKey(key)))
    }

    /// `ref(_:_:)`, or `nil` when the id is absent or `null` (its ordinal, when present, must still
    /// be a non-negative integer).
    static func optionalRef(_ object: JSONObject, _ key: String) throws(DocumentError) -> ItemRef? {
        let ordinal = try ordinal(object, ordinalKey(key))
        guard let id = try optionalString(object, key) else { return nil }
        return ItemRef(id, ordinal: ordinal)
    }

    /// Each element of the array under `key` (absent = empty) decoded by `decode`.
    static func each<T>(
        _ object: JSONObject, _ key: String, _ decode: (JSONValue) throws(DocumentError) -> T
    ) throws(DocumentError) -> [T] {
        try _Decode.optional(object, key) { (value) throws(DocumentError) -> [T] in
            try _Decode.each(try _Decode.array(value), decode)
        } ?? []
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
