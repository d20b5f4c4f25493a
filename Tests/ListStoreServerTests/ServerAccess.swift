import ListJSON
import ListStore
import ListStoreServer
import Testing

/// How a test reaches its server: `open` (no token asked), `service` (the server's one token) or
/// `user` (access on, and a user's token whose one rule grants `admin` on every list). A test that takes the mode as its argument proves
/// that its routes answer a user as they answer without access: the same documents, the same
/// errors, the same replicas at the end; only the journal's authors differ, since a user's writes
/// are recorded as the token's subject.
enum ServerAccess: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case open
    case service
    case user

    /// The modes of a test written for a server without a token, and of one written for the service token.
    static let withoutToken: [ServerAccess] = [.open, .user]
    static let withToken: [ServerAccess] = [.service, .user]

    /// The service token of `service` and `user` servers.
    static let serviceToken = "s3cret"

    var testDescription: String { rawValue }

    /// The subject of the user's token.
    static let subject = "ana"

    /// The token the mode's requests carry.
    var token: String? {
        switch self {
        case .open: nil
        case .service: Self.serviceToken
        case .user: AccessServerTests.tokens.token(["sub": .string(Self.subject)])
        }
    }

    /// `configuration` with the service token for `service` and `user`, and access on for `user`:
    /// the test keys, and `**` granted `admin`.
    func configure(_ configuration: JournalServer.Configuration) async throws -> JournalServer.Configuration {
        var configured = configuration
        if self != .open { configured.token = Self.serviceToken }
        guard self == .user else { return configured }
        configured.access = try await AccessConfiguration(json: AccessServerTests.tokens.accessFile(rules: [["lists": "**", "grant": "admin"]]))
        return configured
    }

    /// The author the journal records for a write that claims `claimed`.
    func author(claimed: String?) -> String? {
        self == .user ? Self.subject : claimed
    }
}
