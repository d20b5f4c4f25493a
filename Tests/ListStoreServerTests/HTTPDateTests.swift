import Foundation
@testable import ListStoreServer
import Testing

/// `HTTPDate`, the `Date` header of the answers written beneath Hummingbird.
@Suite struct HTTPDateTests {
    /// RFC 9110's example, the epoch, and a leap day.
    @Test func knownDatesAreWrittenAsHTTPWritesThem() {
        #expect(HTTPDate.format(secondsSince1970: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(secondsSince1970: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(secondsSince1970: 951_782_400) == "Tue, 29 Feb 2000 00:00:00 GMT")
        #expect(HTTPDate.now().hasSuffix(" GMT"))
    }

    /// Thousands of random instants from 1970 to 2400 are written as Foundation's formatter writes
    /// them in the POSIX locale.
    @Test func randomDatesAgreeWithFoundation() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let seconds = Int.random(in: 0..<13_569_465_600, using: &generator)
            let expected = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
            #expect(HTTPDate.format(secondsSince1970: seconds) == expected, "\(seconds)")
        }
    }
}
