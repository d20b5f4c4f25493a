import ListStoreCore

/// The pages of events of list journals being read for event streams (`GET /v1/lists/{list}/events`),
/// shared by the streams reading at the same version, and the last 16 that were not empty (up to
/// 1 MiB each) for ten seconds or until the store learns of a commit (see `SharedReads`): the streams
/// a commit wakes at one version cost one read.
///
/// ```swift
/// let page = try await pages.page(of: "inbox", after: 41, maxBytes: 1 << 20, generation: store.commitGeneration())
/// ```
struct EventPages: Sendable {
    /// What identifies a page of events.
    struct Key: Hashable, Sendable {
        var list: String
        var since: Int?
        var maxBytes: Int
    }

    /// The most events of one page.
    static let limit = 100

    let store: any ListStoreEngine
    private let reads = SharedReads<Key, EventPage>(keeping: 16) {
        $0.lastVersion != nil && $0.events.readableBytes <= 1 << 20
    }

    init(store: any ListStoreEngine) {
        self.store = store
    }

    /// The page of events of `list` after `version` (at most `maxBytes` of stages, at least one
    /// entry), shared with the reads of the same page under way (and, with `generation`, kept ones).
    /// - Throws: `StoreError` of the read.
    func page(of list: String, after version: Int?, maxBytes: Int, generation: UInt64? = nil) async throws -> EventPage {
        let store = store
        return try await reads.value(for: Key(list: list, since: version, maxBytes: maxBytes), generation: generation) {
            EventPage(try await store.journal(of: list, after: version, limit: Self.limit, maxBytes: maxBytes))
        }
    }
}
