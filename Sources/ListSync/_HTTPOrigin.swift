import Foundation

/// The origin of a URL (RFC 6454: scheme, host and port, the port defaulted by the scheme): a
/// client sends its token only to the server's own origin, so a redirect is followed only within it.
///
/// ```swift
/// _HTTPOrigin(URL(string: "http://Server:80/a")!) == _HTTPOrigin(URL(string: "http://server/b")!)  // true
/// ```
struct _HTTPOrigin: Hashable, Sendable, CustomStringConvertible {
    let scheme: String
    let host: String
    let port: Int

    /// The origin of `url`, or `nil` unless it is an http(s) URL with a host.
    init?(_ url: URL) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = components.port ?? (scheme == "https" ? 443 : 80)
    }

    /// `scheme://host:port`.
    var description: String {
        let host = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(host):\(port)"
    }

    /// `text` (a URL, perhaps unparseable) as messages may show it: without what its authority holds
    /// before an `@` (user name and password) nor its query and fragment (which may hold keys), each
    /// replaced by `***`.
    ///
    /// ```swift
    /// _HTTPOrigin.redacting("http://alice:pw@host:8080/sync?key=k")   // "http://***@host:8080/sync?***"
    /// ```
    /// - Complexity: O(length).
    static func redacting(_ text: String) -> String {
        var text = text
        if let mark = text.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            text = String(text[...mark]) + "***"
        }
        guard let schemeEnd = text.range(of: "://") else { return text }
        let rest = text[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return text }
        return String(text[..<schemeEnd.upperBound]) + "***" + String(rest[at...])
    }
}
