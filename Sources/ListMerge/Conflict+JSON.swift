import ListJSON

/// The JSON form of a conflict report: an array of
/// `{"kind","id","ordinal"?,"section"?,"sectionOrdinal"?,"key"?,"mine"?,"theirs"?}`.
///
/// `kind` is one of `deleted`, `sectionDeleted`, `removedWithSection`, `contentConflict`, `listDeleted`,
/// `unknownSection`; `id` and
/// `section` are strings with their ordinals only when above 0 (see `ItemRef`); keys with nothing to say
/// are left out (`"mine": null` is a `null` value, not a missing one). Unknown keys are ignored on input.
///
/// ```swift
/// let report = Conflict.jsonValue(rebase.conflicts)
/// let back = try Conflict.conflicts(decoding: report)
/// ```
extension Conflict {
    /// The conflict as one JSON object, keys in canonical order.
    /// - Complexity: O(size of the values).
    public var jsonValue: JSONValue {
        var members: [(String, JSONValue)] = [("kind", .string(kind.rawValue))]
        _JSONFields.write(item, as: "id", into: &members)
        if let section { _JSONFields.write(section, as: "section", into: &members) }
        if let key { members.append(("key", .string(key))) }
        if let mine { members.append(("mine", mine)) }
        if let theirs { members.append(("theirs", theirs)) }
        return .object(JSONObject(uniqueKeysWithValues: members))
    }

    /// Decodes one conflict object.
    /// - Throws: `DocumentError` with a path relative to `value`: not an object, `kind` missing or
    ///   unknown, `id` missing or not a string, `section` or `key` not a string, a bad ordinal.
    /// - Complexity: O(size of the values).
    public init(decoding value: JSONValue) throws(DocumentError) {
        let object = try _Decode.object(value)
        let name = try _JSONFields.string(object, "kind")
        guard let kind = Kind(rawValue: name) else {
            throw DocumentError(.invalidValue("unknown conflict kind \(JSONValue.string(name).serialized())"), path: [.key("kind")])
        }
        self.init(
            kind, try _JSONFields.ref(object, "id"), section: try _JSONFields.optionalRef(object, "section"),
            key: try _JSONFields.optionalString(object, "key"), mine: object["mine"], theirs: object["theirs"])
    }

    /// A conflict report as a JSON array, in order.
    /// - Complexity: O(size of the report).
    public static func jsonValue(_ conflicts: [Conflict]) -> JSONValue {
        .array(conflicts.map(\.jsonValue))
    }

    /// Decodes a conflict report (a JSON array of conflict objects).
    /// - Throws: `DocumentError` whose path starts with the index of the first conflict that does not
    ///   decode.
    /// - Complexity: O(size of the report).
    public static func conflicts(decoding value: JSONValue) throws(DocumentError) -> [Conflict] {
        try _Decode.each(try _Decode.array(value)) { (element) throws(DocumentError) -> Conflict in
            try Conflict(decoding: element)
        }
    }
}
