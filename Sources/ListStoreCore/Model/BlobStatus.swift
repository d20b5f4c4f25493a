/// What a store holds of a blob for a list: whether the list has it, and how much of its bytes
/// are here (``ListStoreEngine/blob(_:of:)``).
///
/// ```swift
/// if let status = try await store.blob(photo.hash, of: "inbox"), !status.isStored {
///     // resume the upload at byte status.uploaded
/// }
/// ```
public struct BlobStatus: Hashable, Sendable {
    /// The SHA-256 of the blob's bytes.
    public var hash: ContentHash
    /// The number of bytes, when the store holds some of them or an upload named it (`nil`: a
    /// replica list has it by reference only, its bytes at its source).
    public var size: Int?
    /// How many of its bytes, from the first on, the list's upload sent (`size` once stored): an
    /// interrupted upload resumes there.
    public var uploaded: Int
    /// Whether the list has the blob and the store holds every byte of it, checked against its
    /// hash: it reads through the list.
    public var isStored: Bool

    /// A status. - Complexity: O(1).
    public init(hash: ContentHash, size: Int?, uploaded: Int, isStored: Bool) {
        (self.hash, self.size, self.uploaded, self.isStored) = (hash, size, uploaded, isStored)
    }
}
