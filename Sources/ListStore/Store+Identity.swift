import Foundation
import GRDB

extension Store {
    /// The store's identity.
    ///
    /// ```swift
    /// let id = try store.identity()    // e.g. 1f0c…/1
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1).
    public func identity() throws -> StoreIdentity {
        let pool = try existingPool()
        return try Store.mapErrors(path: path) {
            try pool.read { db in try Store.identity(db, path: path) }
        }
    }

    /// Bumps the epoch, telling every consumer that this store's history may not be the one they
    /// followed: call it after restoring the file from a backup, or after rewriting history. Cursors
    /// of the old epoch then get "resync required" (epoch changed). The store also gets a new client
    /// id for its pushes, so that local changes made after a restore are never mistaken
    /// for ones a source already merged.
    ///
    /// - Returns: the new identity.
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`.
    @discardableResult
    public func advanceEpoch() throws -> StoreIdentity {
        let pool = try existingPool()
        return try Store.mapErrors(path: path) {
            try pool.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    // A new client id too: a restored store must not push under sequence numbers a
                    // source recorded for changes made after the backup.
                    try db.execute(
                        sql: "UPDATE store SET epoch = epoch + 1, client_id = ? WHERE id = 1",
                        arguments: [UUID().uuidString.lowercased()])
                    return .commit
                }
                return try Store.identity(db, path: path)
            }
        }
    }

    static func identity(_ db: Database, path: String) throws -> StoreIdentity {
        guard let row = try Row.fetchOne(db, sql: "SELECT uuid, epoch FROM store WHERE id = 1"),
              let uuid = row["uuid"] as String?, let epoch = row["epoch"] as Int?
        else {
            throw StoreError(.damaged, "the store at \(path) is damaged: it has no identity row")
        }
        return StoreIdentity(uuid: uuid, epoch: epoch)
    }
}
