import Crypto

/// The digest of a whole list: SHA-256 over its sections and elements, in order, with their ids and
/// content hashes; two copies of a list are equal exactly when their digests are (barring a SHA-256
/// collision).
///
/// The hashed bytes are, for each section in order, the record of the section followed by the records
/// of its elements; a record is a tag byte (`S` = 0x53 for a section, `E` = 0x45 for an element), the
/// length of the id's UTF-8 bytes as a little-endian 64-bit integer, those bytes, and the 32 bytes of
/// the item's `ContentHash`. The empty list's digest is the SHA-256 of no bytes.
///
/// ```swift
/// ListDigest.of([ListSection(model: ListItem(id: "s", json: nil), elements: [])]).hex
/// ```
public struct ListDigest: Hashable, Sendable, CustomStringConvertible {
    /// The 64 lowercase hexadecimal digits.
    public var hex: String

    /// A digest from its hexadecimal text.
    public init(hex: String) {
        self.hex = hex
    }

    /// The digest of `sections`, hashing every content.
    /// - Complexity: O(total size of ids and contents).
    public static func of(_ sections: [ListSection]) -> ListDigest {
        ListDigest(
            sections, sectionHashes: sections.map { ContentHash(of: $0.model.content) },
            elementHashes: sections.flatMap { $0.elements.map { ContentHash(of: $0.content) } })
    }

    /// The digest of `sections` whose content hashes are known: one per section, and one per
    /// element, flat (section after section).
    init(_ sections: [ListSection], sectionHashes: [ContentHash], elementHashes: [ContentHash]) {
        var builder = _DigestBuilder()
        var flat = 0
        for (s, section) in sections.enumerated() {
            builder.add(tag: 0x53, id: section.model.id, hash: sectionHashes[s])
            for element in section.elements {
                builder.add(tag: 0x45, id: element.id, hash: elementHashes[flat])
                flat += 1
            }
        }
        self = builder.finish()
    }

    /// `hex`.
    public var description: String { hex }
}

/// Feeds digest records to SHA-256 through a buffer.
struct _DigestBuilder {
    private var hasher = SHA256()
    private var buffer: [UInt8] = []

    init() {
        buffer.reserveCapacity(1 << 16)
    }

    /// Adds one record: tag, id length (UInt64 little-endian), id bytes, content hash.
    mutating func add(tag: UInt8, id: String, hash: ContentHash) {
        buffer.append(tag)
        var id = id
        id.withUTF8 { bytes in
            var length = UInt64(bytes.count).littleEndian
            withUnsafeBytes(of: &length) { buffer.append(contentsOf: $0) }
            buffer.append(contentsOf: bytes)
        }
        hash.append(to: &buffer)
        if buffer.count >= 1 << 16 { flush() }
    }

    private mutating func flush() {
        buffer.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        buffer.removeAll(keepingCapacity: true)
    }

    mutating func finish() -> ListDigest {
        flush()
        let digest = hasher.finalize()
        return ListDigest(hex: _Hex.string(digest.withUnsafeBytes { Array($0) }))
    }
}
