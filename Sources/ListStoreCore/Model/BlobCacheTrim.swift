/// What trimming a replica list's blobs to a budget did (ListSync's `Replica.trimBlobCache(to:)`):
/// the bytes of blobs its source has and no change waiting to be pushed needs were dropped, the
/// ones used longest ago first, until the list held at most the budget (or only what it needs).
public struct BlobCacheTrim: Hashable, Sendable {
    /// How many blobs' bytes were dropped (the list has them by reference: a fetch brings them back).
    public var droppedBlobs: Int
    /// How many bytes those blobs had (the store keeps the bytes of one that another of its lists
    /// holds).
    public var droppedBytes: Int
    /// The bytes of the source's blobs the list still holds (the budget counts these); above the
    /// budget only when changes waiting to be pushed need more. Blobs stored here that the source's
    /// contents did not refer to yet are not counted, and stay.
    public var heldBytes: Int

    /// A result (engines make theirs).
    public init(droppedBlobs: Int, droppedBytes: Int, heldBytes: Int) {
        self.droppedBlobs = droppedBlobs
        self.droppedBytes = droppedBytes
        self.heldBytes = heldBytes
    }
}
