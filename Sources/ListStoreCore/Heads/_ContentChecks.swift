import ListJSON

/// Checks that contents are canonical JSON, on two threads when there are many.
package enum _ContentChecks {
    /// From how many contents checking pays for a second thread.
    package static let parallelThreshold = 256

    /// The first of `count` contents, `locate(k)` giving the k-th and its path, that is not canonical
    /// JSON: its `k` and error; `nil` when all are. Split between two threads from
    /// `parallelThreshold` on.
    /// - Complexity: O(total content size).
    package static func firstFailure(
        count: Int, locate: @Sendable (Int) -> (content: [UInt8], path: () -> String)
    ) -> (index: Int, error: StoreError)? {
        let failures = _Locked([Int: StoreError]())
        _ = _TwoThreads.array(count: count, threshold: parallelThreshold) { (range, base: UnsafeMutablePointer<Bool>) in
            (base + range.lowerBound).initialize(repeating: true, count: range.count)
            for k in range {
                let (content, path) = locate(k)
                do throws(StoreError) {
                    try checkCanonical(content, path: path)
                } catch {
                    // Only the first failure of each half may be the one reported.
                    failures.withLock { $0[k] = error }
                    return
                }
            }
        }
        return failures.withLock { $0.min { $0.key < $1.key } }.map { ($0.key, $0.value) }
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
