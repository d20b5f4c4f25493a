import Crypto
import Foundation
import ListStoreCore
import ListStoreWire
import NIOCore

/// The pages of list journals being read, as answers' bodies: shared by identical requests under
/// way (the long polls a commit wakes among them), and
/// the last 16 that were not empty (up to 1 MiB each), kept for ten seconds or until the store
/// learns of a commit, for the long polls a commit wakes (10,000 of them come over longer than a read
/// takes). The body is one buffer that every answer sharing it sends.
///
/// ```swift
/// let (empty, body) = try await pages.page(Key(list: "inbox", since: 41, limit: 100, maxBytes: 1 << 20), generation: nil)
/// ```
struct JournalPages: Sendable {
    /// What identifies a page (the byte budget is the server's, or the client's when smaller).
    struct Key: Hashable, Sendable {
        var list: String
        var since: Int?
        var limit: Int
        var maxBytes: Int
        var maxEntryBytes: Int = .max
    }

    let store: any ListStoreEngine
    /// A page read: whether it is empty, its body, and the entity tag of a page that is not.
    typealias Page = (empty: Bool, body: ByteBuffer, etag: String?)

    private let reads = SharedReads<Key, Page>(keeping: 16) {
        !$0.empty && $0.body.readableBytes <= 1 << 20
    }

    init(store: any ListStoreEngine) {
        self.store = store
    }

    /// The body of the page `key` (whether it is empty, and the entity tag of one that is not),
    /// read once for the identical requests under way; with `generation` (the store's commit
    /// generation when a commit woke the reader), a page kept from another's read at that generation
    /// may answer. The tag is a digest of the body (96 bits of its SHA-256): the same answer has
    /// the same tag, and another answer another.
    /// - Throws: `StoreError` of the read.
    /// - Complexity: one read of the journal, or none when shared.
    func page(_ key: Key, generation: UInt64?) async throws -> Page {
        let store = store
        return try await reads.value(for: key, generation: generation) {
            let page = try await store.journal(
                of: key.list, after: key.since, limit: key.limit, maxBytes: key.maxBytes, maxEntryBytes: key.maxEntryBytes)
            let empty = page.entries.isEmpty && !page.hasMore
            let body = WireDocument.journal(page, list: key.list)
            // The body's own digest: a store restored and committed to again may answer other
            // entries at the same versions.
            let etag = empty ? nil : "\"" + SHA256.hash(data: body).prefix(12).map { String(format: "%02x", $0) }.joined() + "\""
            return (empty, ByteBuffer(bytes: body), etag)
        }
    }
}
