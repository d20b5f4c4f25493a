@_spi(StoreDriver) @_spi(Replication) @_spi(FeedCursors) import ListStoreCore
import PostgresNIO

// PostgreSQL as a driver of the store's logic (ListStoreCore's `StoreDriver`): every method of the
// store contract runs the logic in one of these transactions.
//
// Writers of one list take turns: a transaction locks the list's row (`SELECT … FOR UPDATE`), and
// the first commits of a new list an advisory lock on its name, so two commits with the same
// `expectedVersion` never both land. The logic (the diff, the hashing) runs on a thread of NIO's
// thread pool, which waits there for each round trip; the cooperative pool never waits.

extension PostgresStore: StoreDriver {
    /// Runs `body` in one transaction on a pooled connection, on a thread of NIO's thread pool:
    /// `.read` in a read-only repeatable-read transaction, `.write` and `.create` in a read-committed
    /// one that is committed when `body` returns and rolled back when it throws; then keeps the heads
    /// it wrote and tells this process's followers of a commit.
    /// - Throws: what `body` throws; PostgreSQL's failures as `StoreError`; `CancellationError`.
    /// - Complexity: that of `body`, plus BEGIN and COMMIT.
    @_spi(StoreDriver)
    public func transaction<T: Sendable>(
        _ access: StoreAccess, _ body: @escaping @Sendable (DriverTransaction) throws -> T
    ) async throws -> T {
        let kind: _TransactionKind =
            switch access {
            case .read, .readBytes: .readOnly
            case .write, .create: .writing
            case .writeUnflushed, .writeBytes: .writingUnflushed
            }
        return try await writing(kind) { try body(DriverTransaction($0)) }
    }

    /// Runs `body` with the row steps of one transaction of `kind`, as `transaction(_:_:)`.
    func writing<T: Sendable>(
        _ kind: _TransactionKind = .writing, within limit: Duration? = nil, _ body: @escaping @Sendable (PostgresTransaction) throws -> T
    ) async throws -> T {
        let (value, written) = try await transaction(kind, within: limit) { [self] connection, operation in
            try await PostgresTransaction.threads.runIfActive { [self] in
                let transaction = PostgresTransaction(self, connection, operation)
                let value = try body(transaction)
                return (value, (heads: transaction.newHeads, changed: !transaction.changedLists.isEmpty, rows: transaction.rowsWritten))
            }
        }
        // Only a head that is in the database is kept (the transaction committed).
        heads.withLock { heads in
            for (list, head) in written.heads { heads[list] = head }
        }
        if written.changed { commits.notify(path: location) }
        wrote(rows: written.rows)
        return value
    }

    @_spi(Replication) public func localCommitGeneration() -> UInt64 {
        commits.generation(of: location)
    }

    @_spi(Replication) public func waitForLocalCommit(unlessGenerationIsNot generation: UInt64, timeout: Duration) async {
        await commits.wait(path: location, unlessGenerationIsNot: generation, timeout: timeout)
    }

    /// The class of the advisory lock the first commits of a new list take on its name.
    static let newListLockClass: Int32 = 0x4C49_5354
}
