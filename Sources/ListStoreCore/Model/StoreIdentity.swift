/// Who a store is: a UUID created with the store, and an epoch that `advanceEpoch()` bumps when the
/// store is reset or restored from a backup. A consumer that remembers both can always tell that it
/// is looking at a different store, or at a different history of the same one.
public struct StoreIdentity: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The store's UUID, lowercase.
    public var uuid: String
    /// 1 for a new store; bumped by `advanceEpoch()`.
    public var epoch: Int

    /// An identity.
    public init(uuid: String, epoch: Int) {
        self.uuid = uuid
        self.epoch = epoch
    }

    /// `uuid/epoch`.
    public var description: String { "\(uuid)/\(epoch)" }
}
