import Hummingbird
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// The one place the server writes beneath Hummingbird: the connection of an event stream, to which
/// `EventFanout` writes each new page of events once framed for every stream at the head, instead of
/// each stream's task writing it through Hummingbird's body writer (ten times the latency at 10,000
/// streams, measured in `http-followers-10k`).
///
/// Writing beneath the body writer is right only while nothing between the route and the connection
/// touches the body. So a stream gets a connection only when the writer its body was handed is
/// Hummingbird's own (the writer straight to the connection's outbound stream): a middleware that
/// wraps the writer (to compress, count or change the bytes), or a release of Hummingbird that puts
/// another writer there, makes `init(channel:writer:)` answer `nil`, and the stream then writes every
/// event through its writer (`JournalRoutes`: it waits for commits as long polls do). The test
/// `EventStreamConnectionTests` fails when Hummingbird's writer is no longer the one this type knows,
/// so that such a change is seen rather than silently slower.
///
/// On HTTP/1.1 a stream is chunked (Hummingbird answers HTTP/1.1 heads, and a stream has no length),
/// so a page is framed as a chunk once for every stream and written from the place of NIO's
/// `HTTPResponseEncoder` in the pipeline, on to the socket, as the encoder would have written it; on
/// other channels (HTTP/2: no HTTP/1 encoder) the body part goes through the whole pipeline.
///
/// ```swift
/// let body = ResponseBody { writer in
///     if let connection = EventStreamConnection(channel: channel, writer: writer) {
///         await fanout.follow(list, after: cursor, connection: connection, keepAlive: keepAlive, maxBytes: maxBytes)
///     }
/// }
/// ```
final class EventStreamConnection: @unchecked Sendable {
    /// The type name of Hummingbird's writer straight to a connection (`HummingbirdCore`'s
    /// `RootResponseBodyWriter`, internal to it, hence named).
    static let directWriter = "HummingbirdCore.RootResponseBodyWriter"

    let channel: any Channel
    // Only touched on `channel.eventLoop`.
    private var looked = false
    private var encoder: ChannelHandlerContext?

    /// The connection of a stream whose body was handed `writer`; `nil` unless `writer` is
    /// Hummingbird's own writer to `channel` (see the type's overview).
    /// - Complexity: O(1).
    init?(channel: any Channel, writer: any ResponseBodyWriter) {
        guard Self.writesStraightToTheConnection(writer) else { return nil }
        self.channel = channel
    }

    /// Whether `writer` is Hummingbird's writer straight to the connection, which nothing wraps.
    static func writesStraightToTheConnection(_ writer: any ResponseBodyWriter) -> Bool {
        String(reflecting: type(of: writer)) == directWriter
    }

    /// Writes and flushes a page (`part`, or `chunk`: the same framed as an HTTP/1.1 chunk).
    /// Runs on the channel's event loop.
    func write(_ part: HTTPResponsePart, chunk: ByteBuffer) {
        channel.eventLoop.preconditionInEventLoop()
        if !looked {
            looked = true
            encoder = try? channel.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
        }
        if let encoder {
            encoder.writeAndFlush(NIOAny(IOData.byteBuffer(chunk)), promise: nil)
        } else {
            channel.writeAndFlush(part, promise: nil)
        }
    }
}
