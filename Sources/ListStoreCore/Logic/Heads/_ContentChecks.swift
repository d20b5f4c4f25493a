import ListJSON

/// Checks that contents are canonical JSON, and hashes them, on two threads when there are many.
package enum _ContentChecks {
    /// From how many contents checking pays for a second thread.
    package static let parallelThreshold = 256

    /// The hashes of `count` contents, `locate(k)` giving the k-th with its item and path, each
    /// checked to be canonical JSON first: with `hashing`, made; otherwise the items'. Split between
    /// two threads from `parallelThreshold` on.
    ///
    /// - Returns: the hashes, or the error of the smallest `k` whose content is not canonical JSON.
    /// - Complexity: O(total content size).
    package static func hashes(
        count: Int, hashing: Bool, references: _BlobReferences, locate: @Sendable (Int) -> (item: HeadItem, content: [UInt8], path: () -> String)
    ) -> (hashes: [ContentHash], failure: (index: Int, error: StoreError)?) {
        let (hashes, failure) = checking(count: count, placeholder: ContentHash(of: [])) { k throws(StoreError) in
            let (item, content, path) = locate(k)
            try checkCanonical(content, references: references, path: path)
            return hashing ? ContentHash(of: content) : item.hash
        }
        return (hashes, failure)
    }

    /// The SHA-256 of `count` contents (`content(k)`, at `path(k)`), each checked to be canonical
    /// JSON first, in one pass split between two threads from `parallelThreshold` on.
    /// - Throws: the error of the first content that is not canonical JSON.
    /// - Complexity: O(total content size).
    package static func checkedHashes(
        count: Int, content: @Sendable (Int) -> [UInt8], references: _BlobReferences, path: @escaping @Sendable (Int) -> String
    ) throws(StoreError) -> [ContentHash] {
        let (hashes, failure) = checking(count: count, placeholder: ContentHash(of: [])) { k throws(StoreError) in
            let content = content(k)
            try checkCanonical(content, references: references) { path(k) }
            return ContentHash(of: content)
        }
        if let failure { throw failure.error }
        return hashes
    }

    /// `make(k)` for every k below `count`, split between two threads from `parallelThreshold` on;
    /// the error of the smallest `k` it throws for (each half stops at its first, the rest of it
    /// `placeholder`).
    private static func checking<T: Sendable>(
        count: Int, placeholder: T, _ make: @Sendable (Int) throws(StoreError) -> T
    ) -> (values: [T], failure: (index: Int, error: StoreError)?) {
        let failures = _Locked([Int: StoreError]())
        let values = _TwoThreads.array(count: count, threshold: parallelThreshold) { (range, base: UnsafeMutablePointer<T>) in
            for k in range {
                do throws(StoreError) {
                    (base + k).initialize(to: try make(k))
                } catch {
                    failures.withLock { $0[k] = error }
                    // Only the first failure of each half may be the one reported.
                    for rest in k..<range.upperBound { (base + rest).initialize(to: placeholder) }
                    return
                }
            }
        }
        return (values, failures.withLock { $0.min { $0.key < $1.key } }.map { ($0.key, $0.value) })
    }

    /// Throws unless `content` is canonical JSON text nested at most `JSONParser.maxContentDepth`
    /// levels deep (so that every document carrying it can be read back) whose objects with the key
    /// `"$blob"` are blob references (`BlobReference`), which go to `references`.
    package static func checkCanonical(_ content: [UInt8], references: _BlobReferences? = nil, path: () -> String) throws(StoreError) {
        let value: JSONValue
        do {
            value = try JSONParser(maxDepth: JSONParser.maxContentDepth).parse(content)
        } catch where error.reason == .tooDeep(limit: JSONParser.maxContentDepth) {
            throw StoreError(
                .invalidSnapshot,
                "\(path()): arrays and objects nested deeper than \(JSONParser.maxContentDepth) levels, the most a store accepts")
        } catch {
            throw StoreError(.invalidSnapshot, "\(path()): not JSON: \(error)")
        }
        guard value.serializedBytes() == content else {
            throw StoreError(.invalidSnapshot, "\(path()): not canonical JSON (expected \(value.serialized()))")
        }
        // Attachments' references, read from the value parsed here (not parsed again for them).
        guard BlobReference.mayAppear(in: content) else { return }
        do {
            var found = [BlobReference]()
            try BlobReference.collect(value) { found.append($0) }
            if !found.isEmpty { references?.add(found) }
        } catch {
            throw StoreError(.invalidSnapshot, "\(path()): \(error.message)")
        }
    }
}

/// The blob references the contents of a commit or a page hold, gathered as they are checked (on
/// two threads: `_ContentChecks`).
///
/// Not API: package-visible for the engines.
package final class _BlobReferences: Sendable {
    private let found = _Locked([BlobReference]())

    package init() {}

    /// Adds `references`.
    func add(_ references: [BlobReference]) { found.withLock { $0 += references } }

    /// Every reference added.
    package var all: [BlobReference] { found.withLock { $0 } }
}
