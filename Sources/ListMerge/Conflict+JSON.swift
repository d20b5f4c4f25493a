import ListJSON

/// The JSON form of a conflict report: an array of
/// `{"kind","id","ordinal"?,"section"?,"sectionOrdinal"?,"key"?,"mine"?,"theirs"?}`.
///
/// `kind` is one of `deleted`, `sectionDeleted`, `removedWithSection`, `contentConflict`, `listDeleted`;
/// an `unknownSection` conflict is written as the kind a rebase reports for it (`sectionDeleted` for an
/// element's intent, `deleted` for a section's own) with `"unknownSection": true`, so that readers
/// that do not know the kind (releases before it) read what they read before; `id` and
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
        var members: [(String, JSONValue)]
        if kind == .unknownSection {
            members = [("kind", .string((section == nil ? Kind.deleted : .sectionDeleted).rawValue)), ("unknownSection", true)]
        } else {
            members = [("kind", .string(kind.rawValue))]
        }
        _JSONFields.write(item, as: "id", into: &members)
        if let section { _JSONFields.write(section, as: "section", into: &members) }
        if let key { members.append(("key", .string(key))) }
        if let mine { members.append(("mine", mine)) }
        if let theirs { members.append(("theirs", theirs)) }
        return .object(JSONObject(uniqueKeysWithValues: members))
    }

    /// Decodes one conflict object.
    /// - Throws: `DocumentError` with a path relative to `value`: not an object, `kind` missing or
    ///   unknown, `id` missing or not a string, `section` or `key` not a string, a bad ordinal,
    ///   `unknownSection` not `true` or with a kind other than `sectionDeleted` (with a `section`) or
    ///   `deleted` (without one).
    /// - Complexity: O(size of the values).
    public init(decoding value: JSONValue) throws(DocumentError) {
        let object = try _Decode.object(value)
        let name = try _JSONFields.string(object, "kind")
        guard var kind = Kind(rawValue: name), kind != .unknownSection else {
            throw DocumentError(.invalidValue("unknown conflict kind \(JSONValue.string(name).serialized())"), path: [.key("kind")])
        }
        let section = try _JSONFields.optionalRef(object, "section")
        if let flag = object["unknownSection"] {
            guard flag == true, section != nil ? kind == .sectionDeleted : kind == .deleted else {
                throw DocumentError(
                    .invalidValue("'unknownSection' must be true, with kind sectionDeleted (an element's, with its section) or deleted (a section's)"),
                    path: [.key("unknownSection")])
            }
            kind = .unknownSection
        }
        self.init(
            kind, try _JSONFields.ref(object, "id"), section: section,
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
