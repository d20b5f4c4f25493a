@_spi(Replication) import ListStore
@_spi(Replication) import ListStoreCore

// A first sync or resync in pages (ListStoreCore's article "Lists of Any Size"): the source's head
// copied page by page into the replica's store, each page in its own transaction, and made the
// replica in one transaction when the last has landed; a sync interrupted at any instant goes on
// from its last landed page.
extension Replica {
    /// What landing the pages did: the complete sync, how many pages it took here, whether it went
    /// on from an earlier one's pages, and whether it had to start again at the head.
    struct StagedPages {
        var sync: StagedSync
        var pages: Int
        var resumed: Bool
        var restarted: Bool
    }

    /// The most bytes a copy's first page asks for (the others ask for `PullOptions.pageBytes`).
    static var firstPageBytes: Int { 256 << 10 }

    /// Lands the source's head in the replica's store page by page, going on from the pages a sync
    /// of the same source list landed before (while their version is the source's head; otherwise
    /// it starts again at the head, and says so), telling `options.onProgress` after each page.
    /// Returns when every page has landed.
    /// - Throws: `SyncError.resyncRequired` (`.differentStore`, `.epochChanged`) when a page comes
    ///   from another store than `identity`; the source's and the replica store's errors (a page
    ///   that does not follow is refused, `StoreError.invalidArgument`, with nothing written).
    func stagePages(
        from source: some ListSource, sourceList: String, identity: StoreIdentity, reason: ResyncReason, options: PullOptions
    ) async throws -> StagedPages {
        var sync = try await store.stagedSync(of: list)
        if let staged = sync, staged.store != identity || staged.sourceList != sourceList { sync = nil }
        // Pages of a version the replica has reached since (by the journal) are of no use.
        if let staged = sync, let position = try await position(), position.store == staged.store, position.version >= staged.version {
            sync = nil
        }
        var (pages, resumed, restarted) = (0, sync != nil, false)
        // The next page is read while one lands: the replica holds at most two at once.
        var ahead: (version: Int, after: ListPage.Cursor, page: Task<ListPage, any Error>)?
        defer { ahead?.page.cancel() }
        while true {
            if let sync, sync.isComplete { return StagedPages(sync: sync, pages: pages, resumed: resumed, restarted: restarted) }
            let page: ListPage
            do {
                if let next = ahead, next.version == sync?.version, next.after == sync?.next {
                    ahead = nil
                    page = try await next.page.value
                } else {
                    ahead?.page.cancel()
                    ahead = nil
                    // The first page is small, so that it lands (and shows) at once.
                    let maxBytes = sync == nil ? min(options.pageBytes, Self.firstPageBytes) : options.pageBytes
                    page = try await source.page(of: sourceList, at: sync?.version, after: sync?.next, maxBytes: maxBytes)
                }
            } catch let error as StoreError where error.code == .versionNotFound && sync != nil {
                // The source's head moved past the version being copied: start again there.
                (sync, restarted) = (nil, true)
                continue
            }
            if let next = page.next {
                let (version, maxBytes) = (page.version, options.pageBytes)
                ahead = (version, next, Task { try await source.page(of: sourceList, at: version, after: next, maxBytes: maxBytes) })
            }
            guard page.store == identity else {
                throw SyncError.resyncRequired(
                    page.store.uuid == identity.uuid ? .epochChanged : .differentStore,
                    message: "a page of list '\(sourceList)' came from store \(page.store.uuid) (epoch \(page.store.epoch)), not from \(identity.uuid) (epoch \(identity.epoch))")
            }
            let staged: StagedSync
            do {
                staged = try await store.stage(page, of: list, reason: sync?.reason ?? reason.rawValue)
            } catch let error as StoreError where error.code == .invalidArgument || error.code == .invalidSnapshot {
                // A page that does not follow, or with a content that is not canonical JSON: the
                // pages before it may not be what they claim either, so the next pull starts anew.
                try await store.dropStagedSync(of: list)
                throw SyncError.transport("the source's page of list '\(sourceList)' was refused: \(error.message)")
            }
            sync = staged
            pages += 1
            options.onProgress?(
                SyncProgress(
                    list: list, version: staged.version, elements: staged.elements, totalElements: staged.elementCount,
                    records: staged.records, totalRecords: staged.sectionCount + staged.elementCount, bytes: staged.bytes,
                    reason: staged.reason, resumed: resumed))
        }
    }

    /// Makes the complete paged sync of the replica its head and position, in one transaction,
    /// rolling back unless it reproduces the version's digest (the staged pages are then dropped,
    /// for the next pull to start anew).
    func commitStagedPages(_ staged: StagedPages, reason: ResyncReason) async throws {
        let sync = staged.sync
        do {
            _ = try await store.commitStagedSync(of: list, message: "resync (\(reason)) to source version \(sync.version) in \(staged.pages) pages") {
                committed in
                guard committed.digest == sync.digest else {
                    throw SyncError.diverged(version: sync.version, expected: sync.digest, actual: committed.digest)
                }
            }
        } catch let error as SyncError {
            try await store.dropStagedSync(of: list)
            throw error
        } catch let error as StoreError where error.code == .invalidSnapshot {
            // A content that is not canonical JSON (the source's pages are not its rows): the next
            // pull starts anew.
            try await store.dropStagedSync(of: list)
            throw SyncError.transport("the pages of source version \(sync.version) do not make a list this store takes: \(error.message)")
        }
    }
}
