import AsyncHTTPClient
import Foundation
@testable import ListSync
import NIOCore
import NIOSSL
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How the AsyncHTTPClient path of `HTTPSource` names failures: as URLSession would, so that a
/// follower retries the same failures on both paths.
@Suite struct NIOHTTPClientTests {
    static func code(_ error: any Error) -> URLError.Code? {
        (_NIOHTTPClient.transportError(error) as? URLError)?.code
    }

    @Test func failuresOnTheWayAreTransientAndHandshakesAreNot() {
        // Transient: what a restarting server or a broken connection gives.
        #expect(Self.code(IOError(errnoCode: ECONNRESET, reason: "read")) == .networkConnectionLost)
        #expect(Self.code(IOError(errnoCode: ECONNREFUSED, reason: "connect")) == .cannotConnectToHost)
        #expect(Self.code(ChannelError.eof) == .networkConnectionLost)
        #expect(Self.code(ChannelError.ioOnClosedChannel) == .networkConnectionLost)
        #expect(Self.code(ChannelError.connectTimeout(.seconds(10))) == .cannotConnectToHost)
        #expect(Self.code(HTTPClientError.remoteConnectionClosed) == .networkConnectionLost)
        #expect(Self.code(HTTPClientError.readTimeout) == .timedOut)
        #expect(Self.code(NIOSSLError.uncleanShutdown) == .networkConnectionLost)
        // Lasting: a certificate this client does not trust.
        #expect(_NIOHTTPClient.transportError(NIOSSLError.handshakeFailed(.unknownError([]))) is NIOSSLError)
        #expect(_NIOHTTPClient.transportError(NIOSSLExtraError.failedToValidateHostname) is NIOSSLExtraError)
        // The caller's own.
        #expect(_NIOHTTPClient.transportError(HTTPClientError.cancelled) is CancellationError)
        #expect(_NIOHTTPClient.transportError(CancellationError()) is CancellationError)
    }
}
