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
        count: Int, hashing: Bool, locate: @Sendable (Int) -> (item: HeadItem, content: [UInt8], path: () -> String)
    ) -> (hashes: [ContentHash], failure: (index: Int, error: StoreError)?) {
        let failures = _Locked([Int: StoreError]())
        let placeholder = ContentHash(of: [])
        let hashes = _TwoThreads.array(count: count, threshold: parallelThreshold) { (range, base: UnsafeMutablePointer<ContentHash>) in
            for k in range {
                let (item, content, path) = locate(k)
                do throws(StoreError) {
                    try checkCanonical(content, path: path)
                    (base + k).initialize(to: hashing ? ContentHash(of: content) : item.hash)
                } catch {
                    failures.withLock { $0[k] = error }
                    // Only the first failure of each half may be the one reported.
                    for rest in k..<range.upperBound { (base + rest).initialize(to: placeholder) }
                    return
                }
            }
        }
        return (hashes, failures.withLock { $0.min { $0.key < $1.key } }.map { ($0.key, $0.value) })
    }

    /// Throws the error of the first of `count` contents (`content(k)`, at `path(k)`) that is not
    /// canonical JSON, checked on two threads from `parallelThreshold` on.
    /// - Complexity: O(total content size).
    package static func checkCanonical(
        count: Int, content: @Sendable (Int) -> [UInt8], path: @escaping @Sendable (Int) -> String
    ) throws(StoreError) {
        let failures = _Locked([Int: StoreError]())
        _ = _TwoThreads.array(count: count, threshold: parallelThreshold) { (range, base: UnsafeMutablePointer<Bool>) in
            for k in range {
                do throws(StoreError) {
                    try checkCanonical(content(k)) { path(k) }
                    (base + k).initialize(to: true)
                } catch {
                    failures.withLock { $0[k] = error }
                    for rest in k..<range.upperBound { (base + rest).initialize(to: false) }
                    return
                }
            }
        }
        if let first = failures.withLock({ $0.min { $0.key < $1.key } }) { throw first.value }
    }

    /// Throws unless `content` is canonical JSON text nested at most `JSONParser.maxContentDepth`
    /// levels deep (so that every document carrying it can be read back).
    package static func checkCanonical(_ content: [UInt8], path: () -> String) throws(StoreError) {
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
    }
}
