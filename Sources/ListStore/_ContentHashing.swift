import Dispatch
import ListJSON

/// Checks and hashes contents, on two threads when there are many.
enum _ContentHashing {
    /// For each `j` in `0..<count`, the hash `body(j)` gives: either a known hash, or an item to check
    /// and hash. Items are split between two threads from 4,096 on.
    ///
    /// - Returns: the hashes, or the error of the smallest `j` whose content is not canonical JSON.
    /// - Complexity: O(total content size).
    static func hashes(
        count: Int, _ body: @Sendable (Int) -> Either
    ) -> (hashes: [ContentHash], failure: (index: Int, error: StoreError)?) {
        let failures = _Locked([Int: StoreError]())
        let placeholder = ContentHash(of: [])
        let hashes = [ContentHash](unsafeUninitializedCapacity: count) { buffer, initialized in
            let slots = _Slots(base: buffer.baseAddress)
            let workers = count >= 4096 ? 2 : 1
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                let from = count * worker / workers
                let to = count * (worker + 1) / workers
                guard from < to, let base = slots.base else { return }
                for j in from..<to {
                    switch body(j) {
                    case .known(let hash):
                        (base + j).initialize(to: hash)
                    case .item(let item, let path):
                        do throws(StoreError) {
                            try checkCanonical(item.content, path: path)
                            (base + j).initialize(to: ContentHash(of: item.content))
                        } catch {
                            failures.withLock { $0[j] = error }
                            // The first failure in this half is the one that may be reported.
                            for k in j..<to { (base + k).initialize(to: placeholder) }
                            return
                        }
                    }
                }
            }
            initialized = count
        }
        return (hashes, failures.withLock { $0.min { $0.key < $1.key } }.map { ($0.key, $0.value) })
    }

    /// What `hashes(count:_:)` does with one slot.
    enum Either {
        /// A hash already known (an unchanged item).
        case known(ContentHash)
        /// An item whose content is checked and hashed, and how to name it.
        case item(ListItem, path: @Sendable () -> String)
    }

    /// The hash of an item's content after checking that it is canonical JSON.
    static func checkedHash(_ item: ListItem, path: () -> String) throws(StoreError) -> ContentHash {
        try checkCanonical(item.content, path: path)
        return ContentHash(of: item.content)
    }

    /// Throws unless `content` is canonical JSON text.
    static func checkCanonical(_ content: [UInt8], path: () -> String) throws(StoreError) {
        let value: JSONValue
        do {
            value = try JSONParser().parse(content)
        } catch {
            throw StoreError(.invalidSnapshot, "\(path()): not JSON: \(error)")
        }
        guard value.serializedBytes() == content else {
            throw StoreError(.invalidSnapshot, "\(path()): not canonical JSON (expected \(value.serialized()))")
        }
    }
}

/// Where the hashing threads write their results.
///
/// `@unchecked Sendable`: each thread initializes a disjoint range of the buffer, and the buffer is
/// read only after `concurrentPerform` has returned.
private struct _Slots: @unchecked Sendable {
    let base: UnsafeMutablePointer<ContentHash>?
}
