/// Byte-level helpers on the UTF-8 form of strings.
///
/// Swift's `String` compares and hashes by Unicode canonical equivalence ("é" written precomposed
/// equals "e" followed by a combining accent). JSON text is exact, so ListJSON compares, orders and
/// hashes strings by their UTF-8 bytes instead; UTF-8 byte order equals Unicode code point order.
enum _UTF8Bytes {
    /// Calls `body` with the UTF-8 bytes of `string`, without copying when the string is native.
    @inline(__always)
    static func with<R>(_ string: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
        let bytes = Array(string.utf8)
        return bytes.withUnsafeBufferPointer(body)
    }

    /// Whether two strings hold the same UTF-8 bytes.
    /// - Complexity: O(n) in the shorter string.
    static func equal(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        return with(a) { x in
            with(b) { y in
                var i = 0
                let n = x.count
                while i < n {
                    if x[i] != y[i] { return false }
                    i += 1
                }
                return true
            }
        }
    }

    /// Three-way comparison of two strings by their UTF-8 bytes (= by Unicode code points):
    /// negative when `a` sorts first, zero when equal, positive when `b` sorts first.
    /// - Complexity: O(n) in the shorter string.
    static func compare(_ a: String, _ b: String) -> Int {
        with(a) { x in with(b) { y in compare(x, y) } }
    }

    /// Three-way comparison of two byte buffers in lexicographic order.
    static func compare(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Int {
        let n = min(x.count, y.count)
        var i = 0
        while i < n {
            let p = x[i], q = y[i]
            if p != q { return p < q ? -1 : 1 }
            i += 1
        }
        return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
    }

    /// Feeds the UTF-8 bytes of `string` (and its length) to `hasher`.
    static func hash(_ string: String, into hasher: inout Hasher) {
        with(string) { bytes in
            hasher.combine(bytes.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
    }
}
