import ListJSON

/// Checks and hashes contents, on two threads when there are many.
package enum _ContentHashing {
    /// From how many contents hashing pays for a second thread.
    package static let parallelThreshold = 256

    /// The content hashes of `count` elements of `target`, `locate(k)` giving where the k-th is, each
    /// checked to be canonical JSON first. The elements are split between two threads from `parallelThreshold` on.
    ///
    /// - Returns: the hashes, or the error of the smallest `k` whose content is not canonical JSON.
    /// - Complexity: O(total content size).
    package static func hashes(
        of target: [ListSection], count: Int, locate: @Sendable (Int) -> (section: Int, element: Int)
    ) -> (hashes: [ContentHash], failure: (index: Int, error: StoreError)?) {
        let failures = _Locked([Int: StoreError]())
        let placeholder = ContentHash(of: [])
        let hashes = _TwoThreads.array(count: count, threshold: parallelThreshold) { (range, base: UnsafeMutablePointer<ContentHash>) in
            for k in range {
                let (t, e) = locate(k)
                do throws(StoreError) {
                    (base + k).initialize(
                        to: try checkedHash(target[t].elements[e]) { "sections[\(t)].elements[\(e)].content" })
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

    /// The hash of an item's content after checking that it is canonical JSON.
    package static func checkedHash(_ item: ListItem, path: () -> String) throws(StoreError) -> ContentHash {
        try checkCanonical(item.content, path: path)
        return ContentHash(of: item.content)
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
