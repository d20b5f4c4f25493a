import Hummingbird
import HummingbirdAuth
import NIOCore

/// The request context of `JournalServer`'s routes: who made the request, and the connection it
/// came on (whose closing ends its waits, `HangUpWatch`).
struct ServerRequestContext: AuthRequestContext {
    var coreContext: CoreRequestContextStorage
    /// Who made the request, once `AccessMiddleware` has verified its token.
    var identity: AccessIdentity?
    /// The connection (for HTTP/2, the stream's channel).
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
