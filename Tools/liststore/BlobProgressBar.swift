import ListStore

/// The progress of a blob's fetch, drawn on standard error when it is a terminal
/// (`Terminal.progress`), and nothing otherwise.
///
/// ```
/// liststore: fetching sha256-2cf2… 12.0/48.5 MiB
/// ```
final class BlobProgressBar: @unchecked Sendable {
    // Safe: a fetch reports its progress from one task at a time.
    private let name: String
    private var drawn = false

    init(hash: ContentHash) {
        name = String(BlobReference.id(of: hash).prefix(11)) + "…"
    }

    /// The fetch's `progress` that draws this bar (`nil` when standard error is not a terminal).
    var reporter: (@Sendable (_ received: Int, _ size: Int) -> Void)? {
        guard Terminal.showsProgress else { return nil }
        return { [self] received, size in
            drawn = true
            Terminal.progress("fetching \(name) \(Self.mebibytes(received))/\(Self.mebibytes(size)) MiB")
        }
    }

    /// Clears the bar once the fetch is over.
    func finish() {
        if drawn { Terminal.progress(nil) }
        drawn = false
    }

    private static func mebibytes(_ bytes: Int) -> String {
        let tenths = bytes * 10 / (1 << 20)
        return "\(tenths / 10).\(tenths % 10)"
    }
}
