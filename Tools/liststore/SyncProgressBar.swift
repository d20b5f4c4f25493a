import Foundation
import ListSync

/// The progress bar of a first sync or a resync in pages, drawn on standard error when it is a
/// terminal (`Terminal.progress`), and nothing otherwise: its bar and percentage, the elements
/// landed out of the list's, and their rate.
///
/// ```
/// liststore: pulling 'inbox' [##########··········]  50% 500,000/1,000,000 elements, 210,000/s
/// ```
final class SyncProgressBar: @unchecked Sendable {
    // Safe: a pull reports its progress from one task at a time.
    private var start = ContinuousClock.now
    private var lastDrawn: ContinuousClock.Instant?
    private var drawn = false
    /// The list and version of the copy drawn (a replica set copies its lists one after another).
    private var copying: (list: String, version: Int)?

    /// The options' `onProgress` that draws this bar (`nil` when standard error is not a terminal).
    var reporter: (@Sendable (SyncProgress) -> Void)? {
        guard Terminal.showsProgress else { return nil }
        return { [self] progress in draw(progress) }
    }

    /// Clears the bar once the pull is over (or before a line is printed).
    func finish() {
        if drawn { Terminal.progress(nil) }
        drawn = false
    }

    private func draw(_ progress: SyncProgress) {
        let now = ContinuousClock.now
        if copying?.list != progress.list || copying?.version != progress.version {
            // Another copy: its rate counts from here.
            (copying, start, lastDrawn) = ((progress.list, progress.version), now, nil)
        }
        // At most ten times a second, and always the last page.
        if let lastDrawn, now - lastDrawn < .milliseconds(100), progress.records < progress.totalRecords { return }
        lastDrawn = now
        drawn = true
        Terminal.progress(Self.line(progress, elapsed: now - start))
    }

    /// The bar's text for `progress` after `elapsed`.
    static func line(_ progress: SyncProgress, elapsed: Duration) -> String {
        let width = 20
        let fraction = min(1, max(0, progress.fractionCompleted))
        let filled = Int((fraction * Double(width)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: "·", count: width - filled)
        let percent = String(Int((fraction * 100).rounded(.down)))
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = seconds > 0 ? ", \(grouped(Int(Double(progress.elements) / seconds)))/s" : ""
        return "pulling \(Output.quoted(progress.list)) [\(bar)] \(String(repeating: " ", count: 3 - percent.count))\(percent)% "
            + "\(grouped(progress.elements))/\(grouped(progress.totalElements)) elements\(rate)"
    }

    /// `n` with a comma between groups of three digits.
    static func grouped(_ n: Int) -> String {
        let digits = Array(String(n))
        var text = ""
        for (k, digit) in digits.enumerated() {
            if k > 0, (digits.count - k) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return text
    }
}
