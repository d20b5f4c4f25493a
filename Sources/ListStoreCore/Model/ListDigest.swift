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
        ListDigest(CommitContents.of(sections).sections)
    }

    /// The digest of a head's ids and content hashes.
    /// - Complexity: O(total size of ids).
    package init(_ sections: [HeadSection]) {
        var builder = _DigestBuilder()
        for section in sections {
            builder.add(tag: 0x53, id: section.model.id, hash: section.model.hash)
            for element in section.elements { builder.add(tag: 0x45, id: element.id, hash: element.hash) }
        }
        self = builder.finish()
    }

    /// `hex`.
    public var description: String { hex }

    /// Whether `hex` is what a digest is, 64 lowercase hexadecimal digits (a digest from elsewhere,
    /// such as a source's answer, may be anything).
    package var isWellFormed: Bool {
        hex.utf8.count == 64 && hex.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }
}

/// Feeds digest records to SHA-256 through a 64 KiB buffer.
package struct _DigestBuilder: ~Copyable {
    private var hasher = SHA256()
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
    private var count = 0

    /// The length of a record whose id has `idCount` UTF-8 bytes.
    package static func recordLength(idCount: Int) -> Int { 1 + 8 + idCount + 32 }

    /// Writes one record at `base` (room for `recordLength(idCount: id.count)` bytes): tag, id
    /// length (UInt64 little-endian), id bytes, content hash. The one place the layout is written.
    package static func write(tag: UInt8, id: UnsafeRawBufferPointer, hash: ContentHash, at base: UnsafeMutableRawPointer) {
        base.storeBytes(of: tag, as: UInt8.self)
        base.storeBytes(of: UInt64(id.count).littleEndian, toByteOffset: 1, as: UInt64.self)
        if id.count > 0 { (base + 9).copyMemory(from: id.baseAddress!, byteCount: id.count) }
        hash.withUnsafeBytes { (base + 9 + id.count).copyMemory(from: $0.baseAddress!, byteCount: 32) }
    }

    /// Calls `body` with the UTF-8 bytes of `id`.
    package static func withUTF8<R>(_ id: String, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if let done = id.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) { return done }
        return Array(id.utf8).withUnsafeBytes(body)
    }

    /// Adds one record: tag, id length (UInt64 little-endian), id bytes, content hash.
    package mutating func add(tag: UInt8, id: String, hash: ContentHash) {
        Self.withUTF8(id) { add(tag: tag, id: $0, hash: hash) }
    }

    /// Adds records already written (`_ElementRecords`).
    package mutating func add(records: UnsafeRawBufferPointer) {
        flush()
        hasher.update(bufferPointer: records)
    }

    private mutating func add(tag: UInt8, id: UnsafeRawBufferPointer, hash: ContentHash) {
        let length = Self.recordLength(idCount: id.count)
        if count + length > buffer.count { flush() }
        guard length <= buffer.count else {
            // An id longer than the buffer goes straight to the hasher.
            let record = UnsafeMutableRawBufferPointer.allocate(byteCount: length, alignment: 8)
            defer { record.deallocate() }
            Self.write(tag: tag, id: id, hash: hash, at: record.baseAddress!)
            hasher.update(bufferPointer: UnsafeRawBufferPointer(record))
            return
        }
        Self.write(tag: tag, id: id, hash: hash, at: buffer.baseAddress! + count)
        count += length
    }

    private mutating func flush() {
        hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        count = 0
    }

    consuming func finish() -> ListDigest {
        flush()
        let digest = hasher.finalize()
        return ListDigest(hex: _Hex.string(digest.withUnsafeBytes { Array($0) }))
    }

    deinit { buffer.deallocate() }
}
