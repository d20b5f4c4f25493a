import Foundation
import ListStoreCore

/// The `Date` header's value (RFC 9110 §5.6.7, `Sun, 06 Nov 1994 08:49:37 GMT`) of the answers the
/// server writes beneath Hummingbird (`LongPollHandler`); Hummingbird's own answers carry its date.
/// Made once a second at most, for every connection.
///
/// ```swift
/// HTTPDate.now()                          // "Sat, 28 Nov 2026 07:01:24 GMT"
/// HTTPDate.format(secondsSince1970: 0)   // "Thu, 01 Jan 1970 00:00:00 GMT"
/// ```
enum HTTPDate {
    private static let latest = _Locked<(second: Int, text: String)>((-1, ""))
    private static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The date of this second.
    /// - Complexity: O(1).
    static func now() -> String {
        let second = Int(Date().timeIntervalSince1970.rounded(.down))
        if let text = latest.withLock({ $0.second == second ? $0.text : nil }) { return text }
        let text = format(secondsSince1970: second)
        latest.withLock { $0 = (second, text) }
        return text
    }

    /// The date `seconds` after 1970-01-01 00:00:00 UTC (the proleptic Gregorian calendar's
    /// civil date of the day count, after Howard Hinnant's `civil_from_days`).
    /// - Complexity: O(1).
    static func format(secondsSince1970 seconds: Int) -> String {
        let (day, time) = (seconds.floorDivided(by: 86_400), seconds - seconds.floorDivided(by: 86_400) * 86_400)
        let shifted = day + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let dayOfMonth = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let weekday = days[((day % 7) + 7) % 7]
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(weekday), \(two(dayOfMonth)) \(months[month - 1]) \(year) \(two(time / 3_600)):\(two(time / 60 % 60)):\(two(time % 60)) GMT"
    }
}

extension Int {
    /// The quotient rounded toward negative infinity.
    fileprivate func floorDivided(by divisor: Int) -> Int {
        let (q, r) = quotientAndRemainder(dividingBy: divisor)
        return r < 0 ? q - 1 : q
    }
}
