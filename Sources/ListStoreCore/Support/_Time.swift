import Foundation

/// Commit times as ISO 8601 text in UTC with milliseconds: `2026-11-21T09:30:00.125Z`.
///
/// Package-visible: ListStorePostgres stamps its commits the same way.
package enum _Time {
    package static func iso8601(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds.quotientAndRemainderFloored(by: 1000).quotient)
        let millis = Int(milliseconds.quotientAndRemainderFloored(by: 1000).remainder)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }

    /// Parses what `iso8601` writes; `nil` for anything else.
    package static func date(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 24, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54, bytes[13] == 0x3A,
            bytes[16] == 0x3A, bytes[19] == 0x2E, bytes[23] == 0x5A
        else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            var value: Int32 = 0
            for byte in bytes[range] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int32(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            let millis = number(20..<23)
        else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        let seconds = timegm(&parts)
        return Date(timeIntervalSince1970: Double(seconds) + Double(millis) / 1000)
    }
}

extension Int64 {
    fileprivate func quotientAndRemainderFloored(by divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        var (q, r) = quotientAndRemainder(dividingBy: divisor)
        if r < 0 { q -= 1; r += divisor }
        return (q, r)
    }
}
