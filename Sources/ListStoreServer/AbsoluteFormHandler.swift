import NIOCore
import NIOHTTP1

/// Keeps the host an absolute-form request target names (`GET http://host/path HTTP/1.1`, RFC 9112
/// §3.2.2, which has it take the place of `Host`) from being lost: the conversion of a request head
/// to Hummingbird's keeps the `Host` field and drops the target's scheme and authority. Behind the
/// HTTP decoder and in front of that conversion, this handler adds the target's authority as a
/// `Host` field when the head has none, or another one: a request that names two hosts then carries
/// two `Host` fields, which the server refuses (400, `OriginPolicyMiddleware`), and one that names
/// its host in its target alone is checked by it.
///
/// ```swift
/// try pipeline.syncOperations.addHandler(AbsoluteFormHandler(), position: .after(decoder))
/// ```
final class AbsoluteFormHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data), let authority = Self.authority(ofAbsoluteForm: head.uri) else {
            return context.fireChannelRead(data)
        }
        if !head.headers["Host"].contains(where: { $0.lowercased() == authority.lowercased() }) {
            head.headers.add(name: "Host", value: authority)
        }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    /// The authority of an absolute-form request target (`scheme://authority[/…]`), as written;
    /// `nil` for any other form (`/path`, `*`, `host:port`).
    /// - Complexity: O(length of `target`).
    static func authority(ofAbsoluteForm target: String) -> String? {
        guard let separator = target.range(of: "://") else { return nil }
        let scheme = target[..<separator.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        let rest = target[separator.upperBound...]
        return String(rest.prefix { !"/?#".contains($0) })
    }
}

@available(*, unavailable)
extension AbsoluteFormHandler: Sendable {}
