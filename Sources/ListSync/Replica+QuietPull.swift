@_spi(Replication) import ListStore
@_spi(Replication) import ListStoreCore

extension Replica {
    /// The pull of a replica in the steady state: it follows `sourceList` at a position whose list
    /// identity it knows, holds nothing local, and the source still journals its version. Each page
    /// is one request (`ListSource.journal(of:after:limit:)`: the page tells the store's identity,
    /// the list's identity and head as it was read), and the page's commits are applied as a pull
    /// applies them, each checked against its digest. A replica at the head makes one request; a
    /// few commits behind, one as well.
    ///
    /// `complete` is false, with what was applied so far, as soon as the replica or a page is not
    /// what this covers (another store or epoch, another list under the name, a version pruned or
    /// past the head, a head whose digest is not the replica's, a list gone, local changes, a
    /// consumer to acknowledge): the full pull then goes on from where the replica stands and
    /// handles it. `nil` when nothing was tried.
    func quietPull(from source: some ListSource, sourceList: String, options: PullOptions) async throws
        -> (result: PullResult, complete: Bool)?
    {
        guard !options.catchUp, !options.replacing, options.consumer == nil,
            let current = try await store.replicaHead(of: list), !current.hasLocalChanges,
            let position = current.position, position.list == sourceList, let listID = position.listID,
            current.digest == position.digest
        else { return nil }
        var result = PullResult(list: list, version: position.version, digest: position.digest.hex, applied: 0, resynced: false, reason: nil)
        while true {
            let page: JournalPage
            do {
                page = try await source.journal(of: sourceList, after: result.version, limit: options.pageSize)
            } catch let error as StoreError where error.code == .versionNotFound || error.code == .listNotFound {
                return (result, false)
            } catch let error as SyncError where error.resyncReason != nil {
                return (result, false)
            }
            // A source that does not tell the store with the page is asked (one request more).
            let identity: StoreIdentity
            if let store = page.store { identity = store } else { identity = try await source.identity() }
            guard identity == position.store, page.listID == listID, let head = page.head, result.version <= head.version else {
                return (result, false)
            }
            if page.entries.isEmpty {
                // At the head: the same head, or a history that changed under the replica.
                return (result, result.version == head.version && !page.hasMore && result.digest == head.digest.hex)
            }
            guard let applied = try await apply(page.entries, identity: identity, of: source, sourceList: sourceList, options: options) else {
                return (result, false)
            }
            result.version = applied.result.version
            result.digest = applied.result.digest
            result.applied += applied.result.applied
            guard applied.complete else { return (result, false) }
            if !page.hasMore, result.version == head.version { return (result, true) }
        }
    }
}
