/// The byte ranges of blob requests: the `Range` of a download (RFC 9110 §14.2) and the
/// `Content-Range` of an upload that resumes.
enum ByteRange {
    /// What a `Range` header asks of a representation of `size` bytes.
    enum Asked: Equatable {
        /// The whole representation: no `Range`, one that is not a single byte range (several
        /// ranges, another unit, bad syntax: RFC 9110 lets a server ignore those), or one that
        /// covers every byte.
        case whole
        /// These bytes (a 206 answer).
        case part(ClosedRange<Int>)
        /// No byte of the representation (a 416 answer).
        case unsatisfiable
    }

    /// What `header` (a `Range` value, `bytes=first-last`, `bytes=first-` or `bytes=-suffix`)
    /// asks of `size` bytes.
    /// - Complexity: O(header's length).
    static func asked(_ header: String?, size: Int) -> Asked {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let spec = header.dropFirst("bytes=".count)
        guard let dash = spec.firstIndex(of: "-") else { return .whole }
        let (first, last) = (spec[..<dash], spec[spec.index(after: dash)...])
        let range: ClosedRange<Int>
        switch (number(first), number(last)) {
        case (nil, let suffix?) where first.isEmpty:
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            range = max(0, size - suffix)...(size - 1)
        case (let start?, nil) where last.isEmpty:
            guard start < size else { return .unsatisfiable }
            range = start...(size - 1)
        case (let start?, let end?) where start <= end:
            guard start < size else { return .unsatisfiable }
            range = start...min(end, size - 1)
        default:
            return .whole
        }
        return range == 0...(size - 1) ? .whole : .part(range)
    }

    /// The first byte and the total of a `Content-Range` value (`bytes first-last/total`), and
    /// whether it is the rest of the total (`last` its last byte); `nil` for anything else.
    /// - Complexity: O(header's length).
    static func contentRange(_ header: String) -> (first: Int, last: Int, size: Int)? {
        guard header.hasPrefix("bytes ") else { return nil }
        let spec = header.dropFirst("bytes ".count)
        guard let dash = spec.firstIndex(of: "-"), let slash = spec.firstIndex(of: "/"), dash < slash,
            let first = number(spec[..<dash]), let last = number(spec[spec.index(after: dash)..<slash]),
            let size = number(spec[spec.index(after: slash)...]), first <= last, last < size
        else { return nil }
        return (first, last, size)
    }

    /// The value of a run of 1 to 18 decimal digits (no sign, no space), or `nil`.
    private static func number(_ text: Substring) -> Int? {
        guard (1...18).contains(text.utf8.count), text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return Int(text)
    }
}
