/// Who made a request to a journal server: the service token (full access: the app's backend,
/// operators) or a user, by a verified token whose claims the access rules read.
enum AccessIdentity: Sendable, Hashable {
    /// The service token (`JournalServer.Configuration.token`), or anyone on a server without tokens.
    case service
    /// A user's verified token.
    case user(AccessToken)
}
