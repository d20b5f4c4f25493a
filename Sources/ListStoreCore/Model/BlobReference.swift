import ListJSON

/// A reference to an attachment (a blob: a photo, a file) in an element's content or a section's:
/// the JSON object `{"$blob":"sha256-<64 lowercase hex>","size":N,"type":"image/jpeg","name":"IMG_1.jpg"}`,
/// anywhere in the content, with `size` required and `type` and `name` optional. The bytes live
/// beside the list, not in its JSON: a diff, a journal page or a replica carries the reference, and
/// changing the attachment is an update of the element like any other.
///
/// A store refuses a content holding an object with the key `"$blob"` that is not a reference as
/// written here (a malformed hash, a negative size, another key) as it refuses content that is not
/// canonical JSON (`StoreError.Code.invalidSnapshot`, 400 over HTTP).
///
/// ```swift
/// let photo = BlobReference(of: jpegBytes, type: "image/jpeg", name: "IMG_1.jpg")
/// let content: JSONValue = ["title": "Beach", "photo": photo.json]
/// try BlobReference.references(in: content)   // [photo]
/// ```
public struct BlobReference: Hashable, Sendable, CustomStringConvertible {
    /// The SHA-256 of the bytes.
    public var hash: ContentHash
    /// The number of bytes.
    public var size: Int
    /// The media type (`"image/jpeg"`), if the reference names one.
    public var type: String?
    /// The file name (`"IMG_1.jpg"`), if the reference names one.
    public var name: String?

    /// The key that makes a JSON object a reference.
    public static let key = "$blob"

    /// The most bytes a reference may name: 2^50 (1 PiB), so that every size fits any integer a
    /// client reads JSON numbers into exactly.
    public static let maxSize = 1 << 50

    /// The most UTF-8 bytes of `type` and of `name`.
    public static let maxTextBytes = 1_024

    /// A reference to `size` bytes whose SHA-256 is `hash`.
    /// - Precondition: `0 <= size <= maxSize`.
    public init(hash: ContentHash, size: Int, type: String? = nil, name: String? = nil) {
        precondition((0...Self.maxSize).contains(size), "a blob's size is from 0 to \(Self.maxSize) bytes")
        (self.hash, self.size, self.type, self.name) = (hash, size, type, name)
    }

    /// A reference to `bytes`.
    /// - Complexity: O(bytes.count).
    public init(of bytes: [UInt8], type: String? = nil, name: String? = nil) {
        self.init(hash: ContentHash(of: bytes), size: bytes.count, type: type, name: name)
    }

    /// The hash as a reference writes it: `sha256-` and 64 lowercase hexadecimal digits.
    public var id: String { Self.id(of: hash) }

    /// `id`.
    public var description: String { id }

    /// The reference as the JSON object a content holds.
    public var json: JSONValue {
        var members: [(String, JSONValue)] = [(Self.key, .string(id)), ("size", .number(JSONNumber(size)))]
        if let name { members.append(("name", .string(name))) }
        if let type { members.append(("type", .string(type))) }
        return .object(JSONObject(uniqueKeysWithValues: members))
    }

    /// `sha256-` and the 64 lowercase hexadecimal digits of `hash`.
    public static func id(of hash: ContentHash) -> String { "sha256-" + hash.hex }

    /// The hash an id names (`sha256-` and 64 lowercase hexadecimal digits); `nil` for any other text.
    /// - Complexity: O(id.utf8.count).
    public static func hash(ofID id: String) -> ContentHash? {
        guard id.utf8.count == 71, id.hasPrefix("sha256-") else { return nil }
        let digits = String(id.dropFirst(7))
        // Lowercase only: one id per hash.
        guard digits.utf8.allSatisfy({ !(UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0) }), let bytes = _Hex.bytes(digits) else { return nil }
        return ContentHash(bytes: bytes)
    }

    /// The reference `object` is, `nil` when it has no `"$blob"` key.
    /// - Throws: `StoreError` `.invalidSnapshot` naming what is wrong, when it has the key but is
    ///   not a reference.
    public init?(_ object: JSONObject) throws(StoreError) {
        guard let id = object[Self.key] else { return nil }
        func refused(_ reason: String) -> StoreError {
            StoreError(.invalidSnapshot, "an object with the key \"$blob\" is a blob reference, and this one \(reason)")
        }
        guard case .string(let text) = id, let hash = Self.hash(ofID: text) else {
            throw refused("does not name its blob as \"sha256-\" and 64 lowercase hexadecimal digits")
        }
        guard case .number(let number)? = object["size"], let size = number.intValue, (0...Self.maxSize).contains(size) else {
            throw refused("has no \"size\" that is a whole number of bytes from 0 to \(Self.maxSize)")
        }
        func optionalText(_ key: String) throws(StoreError) -> String? {
            switch object[key] {
            case nil: return nil
            case .string(let value)? where value.utf8.count <= Self.maxTextBytes: return value
            default: throw refused("has a \"\(key)\" that is not a string of at most \(Self.maxTextBytes) bytes")
            }
        }
        let (type, name) = (try optionalText("type"), try optionalText("name"))
        if let other = object.keys.first(where: { ![Self.key, "size", "type", "name"].contains($0) }) {
            throw refused("has the key \"\(other)\" (a reference holds \"$blob\", \"size\", \"type\" and \"name\")")
        }
        self.init(hash: hash, size: size, type: type, name: name)
    }

    /// The references anywhere in `content`, in the order they appear (depth first), each as often
    /// as it appears.
    /// - Throws: `StoreError` `.invalidSnapshot` for an object with the key `"$blob"` that is not a
    ///   reference.
    /// - Complexity: O(size of `content`).
    public static func references(in content: JSONValue) throws(StoreError) -> [BlobReference] {
        var found = [BlobReference]()
        try collect(content) { found.append($0) }
        return found
    }

    /// Whether canonical JSON text `content` may hold a reference: it holds a `$` (canonical JSON
    /// writes the key's `$` as it is).
    /// - Complexity: O(content.count).
    package static func mayAppear(in content: [UInt8]) -> Bool {
        content.contains(UInt8(ascii: "$"))
    }

    /// Calls `body` with each reference anywhere in `value`, depth first.
    /// - Throws: `StoreError` `.invalidSnapshot` for an object with the key `"$blob"` that is not a
    ///   reference.
    package static func collect(_ value: JSONValue, _ body: (BlobReference) -> Void) throws(StoreError) {
        switch value {
        case .array(let elements):
            for element in elements { try collect(element, body) }
        case .object(let object):
            if let reference = try BlobReference(object) { return body(reference) }
            for member in object { try collect(member.value, body) }
        case .null, .bool, .number, .string:
            return
        }
    }
}
