import Hummingbird
import NIOCore

/// The request context of `JournalServer`'s routes: Hummingbird's basic context and the connection
/// the request came on (the event streams at the head of a list are written by `EventFanout`
/// straight from their connections' event loops).
struct ServerRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection (for HTTP/2, the stream's channel).
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
