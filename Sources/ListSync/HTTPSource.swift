import Foundation
import ListDiff
import ListStore
import ListStoreWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if !canImport(Darwin)
import NIOSSL
#endif

/// A list source on another machine: the journal served by `liststore serve` (`JournalServer`), read
/// over HTTP. A replica pulls from it as from a local store, resync by diff included; following a
/// list (`commits(of:after:pageSize:wait:)`, which `changes(after:)` and `Replica.follow` use) reads
/// one Server-Sent Events stream that the server writes each commit to, or long polls against a
/// server without event streams; waiting for a commit is a long poll.
///
/// ```swift
/// let source = try HTTPSource("http://10.0.0.2:8080", token: "s3cret")
/// let replica = Replica(store: try Store(path: "copy.liststore"), list: "inbox")
/// try await replica.follow(from: source) { print("at source version", $0.version) }
/// ```
///
/// Errors: the server's store errors come back as `StoreError` with their code (an unknown list is
/// `.listNotFound`, a pruned version `.versionNotFound`); a refused token is `SyncError.unauthorized`;
/// anything else that goes wrong on the way is `SyncError.transport` naming the request, marked
/// transient (`SyncError.isTransient`) when trying again may heal it: no connection, a timeout, a
/// server that goes away mid-answer, a 502, 503 or 504, and the store errors that heal in time
/// (`unavailable`, `outcomeUnknown`, `storageFull`, `uploadGivenUp`). An answer that is not the expected document,
/// one larger than `maxAnswerBytes`, or a redirect to another origin is not transient. Nothing is
/// applied from an incomplete answer.
///
/// Limits: every request must be answered completely within `requestTimeout` (a long poll gets its
/// wait on top) and fails after `idleTimeout` without a byte; an answer is read up to
/// `maxAnswerBytes` and the request fails as soon as it passes them, without reading the rest.
/// Redirects are followed only within the server's origin (scheme, host and port), so the token
/// never goes anywhere else; a redirect to another origin fails the request. Messages never show a
/// URL's user name or password (the initializers refuse them) nor the token.
public struct HTTPSource: ListSource {
    /// The server's base URL (`http://host:port`, perhaps with a path prefix).
    public let url: URL
    /// The bearer token sent with every request (when there is no `tokenProvider`).
    public let token: String?
    /// Gives the bearer token of each request, from the app's sign-in: called before every request
    /// with `refresh` false, and once more with `refresh` true after the server refused the token
    /// (401) before the request fails, so that a fresh token is fetched (`nil`: no token).
    public let tokenProvider: TokenProvider?

    /// How an `HTTPSource` gets a user's token; see `tokenProvider`.
    public typealias TokenProvider = @Sendable (_ refresh: Bool) async throws -> String?
    /// How long a request may take, answer included, before it fails (a long poll gets its wait on top).
    public var requestTimeout: Duration
    /// How long a request may go without receiving anything before it fails (a long poll gets its
    /// wait on top).
    public var idleTimeout: Duration = .seconds(30)
    /// The largest answer (body bytes) accepted; a request whose answer is larger fails as soon as
    /// it passes this, without reading the rest. A snapshot of a large list can take hundreds of MB.
    /// A journal or feed page is read entry by entry as it arrives; this bounds the whole page.
    public var maxAnswerBytes: Int = HTTPSource.defaultMaxAnswerBytes
    /// The bytes of stages a journal page holds at most (past its first entry, which a page always
    /// holds), asked of the server with each page (its own page size applies when smaller). Pages
    /// are read entry by entry as they arrive, so a pull's memory follows this; `maxAnswerBytes`
    /// still bounds what any page may bring.
    public var maxPageBytes: Int = HTTPSource.defaultMaxPageBytes

    /// The certificate authorities an `https` server's certificate must be signed by, in place of
    /// the system's (`nil`: the system's); see `CertificateAuthorities`.
    public var certificateAuthorities: CertificateAuthorities?

    /// Whether following a list (`commits(of:after:pageSize:wait:)`, `Replica.follow`) long-polls
    /// its journal instead of reading its event stream. For many followers of one list behind a
    /// shared cache (the server's "Deploying behind a cache"): the cache answers the long polls of
    /// all followers at one version with one request to the server, while each event stream is a
    /// connection to the server of its own. A commit reaches a follower that waits behind another's
    /// long poll later than by an event stream (nginx looks for the answer every 500 ms).
    ///
    /// ```swift
    /// var source = try HTTPSource("https://lists.example.com", token: token)
    /// source.followsByLongPolls = true
    /// ```
    public var followsByLongPolls = false

    /// Whether blob uploads go in parts of 4 MiB, a request each, as on Apple platforms (see
    /// `storeBlob`), rather than in one request whose body streams: for tests of that path off
    /// Apple platforms.
    package var uploadsBlobsInParts = false

    /// The default `maxAnswerBytes`: 64 MiB on iOS, tvOS, watchOS and visionOS, whose apps are
    /// stopped long before a larger answer fits; 512 MiB elsewhere.
    #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
    public static let defaultMaxAnswerBytes = 64 << 20
    #else
    public static let defaultMaxAnswerBytes = 512 << 20
    #endif

    /// The default `maxPageBytes`: 4 MiB.
    public static let defaultMaxPageBytes = 4 << 20

    let serverOrigin: _HTTPOrigin
    /// The cursors of the last empty long polls, shared by the copies of this source.
    let longPollCursors = LongPollCursors()

    /// A source at `url`: an absolute `http` or `https` URL, perhaps with a path prefix (requests go
    /// to `<url>/v1/…`).
    ///
    /// ```swift
    /// var source = try HTTPSource(url: URL(string: "https://sync.example.com/liststore")!, token: token)
    /// source.maxAnswerBytes = 64 << 20
    /// ```
    /// - Throws: `SyncError.transport` unless it is an `http` or `https` URL with a host; when it
    ///   holds a user name or password (give credentials as `token`; they would be sent to the
    ///   server and shown in messages), a query or a fragment (requests add their own).
    public init(url: URL, token: String? = nil, requestTimeout: Duration = .seconds(120)) throws {
        try self.init(url: url, token: token, tokenProvider: nil, requestTimeout: requestTimeout)
    }

    private init(url: URL, token: String?, tokenProvider: TokenProvider?, requestTimeout: Duration) throws {
        let shown = _HTTPOrigin.redacting(url.absoluteString)
        guard let origin = _HTTPOrigin(url), let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            throw SyncError.transport("'\(shown)' is not an http:// or https:// URL")
        }
        guard components.user == nil, components.password == nil else {
            throw SyncError.transport("'\(shown)' holds a user name or password: give the server's token as the token instead")
        }
        guard components.query == nil, components.fragment == nil else {
            throw SyncError.transport("'\(shown)' has a query or fragment: give the server's base URL (requests add their own)")
        }
        self.url = url
        self.token = token
        self.tokenProvider = tokenProvider
        self.requestTimeout = requestTimeout
        self.serverOrigin = origin
    }

    /// A source at `url` whose requests carry the token `tokenProvider` gives: an app's signed-in
    /// user's JWT, fetched anew (`refresh` true) when the server refuses the one it had.
    ///
    /// ```swift
    /// let source = try HTTPSource(url: server, tokenProvider: { refresh in
    ///     try await session.accessToken(forceRefresh: refresh)   // the app's sign-in layer
    /// })
    /// ```
    /// - Throws: as `init(url:token:requestTimeout:)`.
    public init(url: URL, tokenProvider: @escaping TokenProvider, requestTimeout: Duration = .seconds(120)) throws {
        try self.init(url: url, token: nil, tokenProvider: tokenProvider, requestTimeout: requestTimeout)
    }

    /// A source at the URL `string` whose requests carry the token `tokenProvider` gives (see
    /// `init(url:tokenProvider:requestTimeout:)`).
    ///
    /// ```swift
    /// let source = try HTTPSource("https://lists.example.com", tokenProvider: { refresh in
    ///     try await session.accessToken(forceRefresh: refresh)
    /// })
    /// ```
    /// - Throws: as `init(_:token:requestTimeout:)`.
    public init(_ string: String, tokenProvider: @escaping TokenProvider, requestTimeout: Duration = .seconds(120)) throws {
        try self.init(url: try HTTPSource.url(string), token: nil, tokenProvider: tokenProvider, requestTimeout: requestTimeout)
    }

    /// A source at the URL `string` (see `init(url:token:requestTimeout:)`).
    /// - Throws: `SyncError.transport` unless it is an absolute `http` or `https` URL with a host and
    ///   without user name, password, query or fragment.
    public init(_ string: String, token: String? = nil, requestTimeout: Duration = .seconds(120)) throws {
        try self.init(url: try HTTPSource.url(string), token: token, requestTimeout: requestTimeout)
    }

    /// The URL `string` names, or `SyncError.transport`.
    private static func url(_ string: String) throws -> URL {
        guard let url = URL(string: string) else {
            throw SyncError.transport("'\(_HTTPOrigin.redacting(string))' is not an http:// or https:// URL")
        }
        return url
    }

    public func identity() async throws -> StoreIdentity {
        try decode(try await get("v1/store"), WireDocument.decodeIdentity)
    }

    public func summary(of list: String) async throws -> ListSummary {
        try decode(try await get(path(list)), WireDocument.decodeSummary)
    }

    /// The store `list` is a replica of, as the server's summary of it says (`replicaOf`).
    public func upstreamStore(of list: String) async throws -> StoreIdentity? {
        try decode(try await get(path(list)), WireDocument.decodeReplicaOf)
    }

    public func journal(of list: String, after version: Int, limit: Int) async throws -> JournalPage {
        try await streamedJournal(of: list, after: version, limit: max(0, limit))
    }

    /// A page of `list`'s head (`GET /v1/lists/{list}/pages`; see `ListSource`), read record by
    /// record as it arrives. A record written as a ListStore server writes one carries its content
    /// as sent, not parsed here: the store a page lands in checks every content (a replica refuses
    /// a page holding one that is not canonical JSON, and starts its sync anew).
    public func page(of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int) async throws -> ListPage {
        try await streamedListPage(of: list, at: version, after: cursor, maxBytes: maxBytes)
    }

    public func snapshot(of list: String, at version: Int?) async throws -> ListSnapshot {
        try decode(try await get(path(list, "snapshot"), version.map { ["at": $0] } ?? [:]), WireDocument.decodeSnapshot)
    }

    public func catchUp(of list: String, from version: Int, applyingTo state: [ListSection]) async throws
        -> (changeset: ListChangeset, head: ListSnapshot)
    {
        let bytes = try await get(path(list, "diff"), ["from": version])
        let (changeset, head) = try decode(bytes) { try WireDocument.decodeDiff($0, applyingTo: state) }
        return (changeset, head)
    }

    /// Waits for a commit to `list` after `version`: a long poll of `timeout` (whole seconds).
    ///
    /// The long poll carries a cursor: 0 at first, then the one the server answered the last long
    /// poll of the list at that version and wait with, when it ended without a commit. A cache in
    /// front of the server (the server's "Deploying behind a cache") keeps such an empty answer for
    /// the followers who waited behind it, and the cursor makes the next long poll a URL it does
    /// not answer. Behind such a cache, `false` may come before `timeout`, at once, and a commit
    /// made in the meantime is seen by the next call.
    public func waitForCommit(to list: String, after version: Int, timeout: Duration) async throws -> Bool {
        let seconds = max(0, Int((timeout + .milliseconds(999)).components.seconds))
        var query = "since=\(version)&limit=0&wait=\(seconds)"
        let key = LongPollCursors.Key(list: list, version: version, wait: seconds)
        if seconds > 0 { query += "&cursor=\(await longPollCursors.cursor(at: key) ?? 0)" }
        let (http, bytes, what) = try await exchange("GET", path(list, "journal"), query: query, extraTime: .seconds(seconds))
        guard (200..<300).contains(http.statusCode) else { throw Self.failure(status: http.statusCode, body: bytes, what: what) }
        let page = try decode(bytes, WireDocument.decodeJournal)
        let cursor = page.hasMore ? nil : http.value(forHTTPHeaderField: "X-ListStore-Cursor").flatMap { Int($0) }
        await longPollCursors.note(cursor, at: key)
        return page.hasMore
    }

    public func acknowledge(consumer name: String, of list: String, version: Int) async throws {
        _ = try await send("PUT", path(list, "consumers", name), body: Array("{\"version\":\(version)}".utf8))
    }

    public func push(_ push: Push, to list: String) async throws -> PushAnswer {
        try decode(try await send("POST", path(list, "pushes"), body: WireDocument.push(push)), WireDocument.decodePushAnswer)
    }

    public func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) async throws -> [PushAnswer] {
        try decode(
            try await get(path(list, "pushes", client), ["from": seqs.lowerBound, "to": seqs.upperBound]), WireDocument.decodePushes)
    }

    // MARK: - Requests

    /// `v1/lists/<list>[/<more>…]`, each segment percent-encoded.
    func path(_ list: String, _ more: String...) -> String {
        (["v1", "lists", PercentEncoding.encode(list)] + more.map(PercentEncoding.encode)).joined(separator: "/")
    }

    private func get(_ path: String, _ query: KeyValuePairs<String, Int> = [:], extraTime: Duration = .zero) async throws -> [UInt8] {
        try await send("GET", path, query: query.map { "\($0.key)=\($0.value)" }.joined(separator: "&"), extraTime: extraTime)
    }

    /// The URL of `path` (percent-encoded, relative to `url`'s path) with the percent-encoded `query`.
    private func target(_ path: String, query: String) throws -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            throw SyncError.transport("cannot make a URL of \(_HTTPOrigin.redacting(url.absoluteString))")
        }
        var base = components.percentEncodedPath
        if !base.hasSuffix("/") { base += "/" }
        components.percentEncodedPath = base + path
        components.percentEncodedQuery = query.isEmpty ? nil : query
        guard let target = components.url else { throw SyncError.transport("cannot make a URL of \(base + path)") }
        return target
    }

    /// Sends one request; returns the body of a 2xx answer, throws the error an other answer names.
    func send(_ method: String, _ path: String, query: String = "", body: [UInt8]? = nil, extraTime: Duration = .zero)
        async throws -> [UInt8]
    {
        let (http, bytes, what) = try await exchange(method, path, query: query, body: body, extraTime: extraTime)
        guard (200..<300).contains(http.statusCode) else { throw Self.failure(status: http.statusCode, body: bytes, what: what) }
        return bytes
    }

    /// Sends one request (`headers` added to it; a body of `bodyType`); returns the answer whatever
    /// its status, its whole body, and how messages name the request. A refused token is asked for
    /// anew once, when a provider gives them.
    /// - Throws: `SyncError.transport` for an answer cut short, and as `run(_:_:what:deadline:)`.
    func exchange(
        _ method: String, _ path: String, query: String = "", body: [UInt8]? = nil, bodyType: String = "application/json",
        headers: [(String, String)] = [], extraTime: Duration = .zero
    ) async throws -> (HTTPURLResponse, [UInt8], what: String) {
        var refresh = false
        var (http, bytes, what): (HTTPURLResponse, [UInt8], String)
        repeat {
            var (request, named) = try request(
                method, path, query: query, body: body, bodyType: bodyType, extraTime: extraTime, token: try await bearer(refresh: refresh))
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            let transfer = _HTTPTransfer(origin: serverOrigin, maxBytes: maxAnswerBytes)
            (http, bytes) = try await run(transfer, request, what: named, deadline: requestTimeout + extraTime)
            what = named
            refresh = http.statusCode == 401 && tokenProvider != nil && !refresh
        } while refresh && http.statusCode == 401
        if (200..<300).contains(http.statusCode), let length = http.value(forHTTPHeaderField: "Content-Length").flatMap(Int.init),
            length != bytes.count
        {
            throw SyncError.transport("\(what): the answer ended after \(bytes.count) of \(length) bytes", transient: true)
        }
        return (http, bytes, what)
    }

    /// The request of `method` on `path`, and how messages name it (`GET http://…`).
    func request(
        _ method: String, _ path: String, query: String, body: [UInt8]? = nil, bodyType: String = "application/json", extraTime: Duration = .zero,
        accept: String = "application/json", token: String?
    ) throws -> (URLRequest, what: String) {
        let target = try target(path, query: query)
        var request = URLRequest(url: target)
        request.httpMethod = method
        request.timeoutInterval = Self.seconds(idleTimeout + extraTime)
        request.setValue(accept, forHTTPHeaderField: "Accept")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = Data(body)
            request.setValue(bodyType, forHTTPHeaderField: "Content-Type")
        }
        return (request, "\(method) \(target.absoluteString)")
    }

    /// The bearer token of the next request: the provider's (asked for a fresh one with `refresh`),
    /// or `token`.
    /// - Throws: what the provider throws.
    func bearer(refresh: Bool) async throws -> String? {
        guard let tokenProvider else { return token }
        return try await tokenProvider(refresh)
    }

    /// Runs `transfer`; returns the answer and its collected body.
    /// - Throws: `CancellationError` when cancelled; `SyncError.transport` for what went wrong on the way.
    func run(_ transfer: _HTTPTransfer, _ request: URLRequest, what: String, deadline: Duration?) async throws
        -> (HTTPURLResponse, [UInt8])
    {
        do {
            #if canImport(Darwin)
            let (http, data) = try await _URLSessionClient.run(transfer, request, authorities: certificateAuthorities, deadline: deadline)
            #else
            let (http, data) = try await _NIOHTTPClient.run(transfer, request, authorities: certificateAuthorities, deadline: deadline)
            #endif
            return (http, [UInt8](data))
        } catch {
            throw transferFailure(error, what: what, deadline: deadline)
        }
    }

    /// What a request's failure (`error`) is for the caller: `CancellationError` when cancelled;
    /// otherwise `SyncError.transport`, transient or not as what went wrong says.
    func transferFailure(_ error: any Error, what: String, deadline: Duration?) -> any Error {
        switch error {
        case _HTTPTransfer.Stop.tooLarge:
            return SyncError.transport("\(what): the answer is larger than the \(Self.size(maxAnswerBytes)) this client accepts; not read further")
        case _HTTPTransfer.Stop.deadline:
            return SyncError.transport("\(what): no complete answer within \(Self.secondsText(deadline ?? .zero))", transient: true)
        case _HTTPTransfer.Stop.redirectElsewhere(let elsewhere):
            return SyncError.transport("\(what): redirected to another origin (\(elsewhere)); not followed (only \(serverOrigin) gets the token)")
        case _HTTPTransfer.Stop.tooManyRedirects:
            return SyncError.transport("\(what): redirected more than \(_HTTPTransfer.maxRedirects) times; not followed further")
        case _HTTPTransfer.Stop.refused(let failure as StreamedArrayReader.Failure) where failure.elementTooLarge:
            return SyncError.transport("\(what): \(failure.description); not read further")
        case _HTTPTransfer.Stop.refused(let why):
            return SyncError.transport("\(url.absoluteString) answered a document this client cannot read: \(why); not read further")
        case is CancellationError:
            return CancellationError()
        default:
            if Task.isCancelled { return CancellationError() }
            let (description, transient) = Self.describe(error)
            return SyncError.transport("\(what): \(description)", transient: transient)
        }
    }

    /// The error an answer other than 2xx (`status`), or an error event of a stream (`nil`), names
    /// with its document `body`.
    static func failure(status: Int?, body bytes: [UInt8], what: String) -> any Error {
        let reported = try? WireDocument.decodeError(bytes)
        let message = reported?.message ?? status.map { "HTTP \($0)" } ?? "an error event"
        if status == 401 {
            return SyncError.unauthorized("\(what): the server refused the token (401): \(message)")
        }
        if status == 403, reported?.code == "forbidden" {
            return SyncError.unauthorized("\(what): the token may not do this (403): \(message)")
        }
        // A cursor of another epoch (409), or a stream that the store's restore ended (an error event).
        if status == 409 || status == nil, let reported, reported.code == "cursorMismatch" {
            return SyncError.resyncRequired(.epochChanged, message: "\(what): \(reported.message)")
        }
        if let reported, [StoreError.Code.unavailable, .outcomeUnknown, .storageFull, .uploadGivenUp].contains(StoreError.Code(named: reported.code)) {
            // The server's store could not be reached, lost a change's commit, or had no room, or
            // another upload's failure gave up the one this request went on with: trying again
            // heals each in time (a push lands once however often it is sent; its uploads ask
            // where they stand first).
            return SyncError.transport("\(what): HTTP \(status ?? 503) \(reported.code): \(message)", transient: true)
        }
        // The list does not have the blob: as the store says it.
        if status == 404, let reported, reported.code == "blobNotFound" { return StoreError(.missingBlob, message) }
        if let reported, let code = StoreError.Code(named: reported.code) {
            return StoreError(code, message, expectedVersion: reported.expectedVersion, currentVersion: reported.currentVersion)
        }
        guard let status else { return SyncError.transport("\(what): the event stream failed: \(message)") }
        // A gateway's answer while the server is restarted or deployed, or a server without room.
        let transient = [502, 503, 504, 507].contains(status)
        return SyncError.transport("\(what): HTTP \(status): \(message)", transient: transient)
    }

    func decode<T>(_ bytes: [UInt8], _ decode: ([UInt8]) throws -> T) throws -> T {
        do {
            return try decode(bytes)
        } catch {
            throw SyncError.transport("\(url.absoluteString) answered a document this client cannot read: \(error)")
        }
    }

    /// What went wrong, for people, and whether trying again may heal it.
    private static func describe(_ error: any Error) -> (String, transient: Bool) {
        let untrusted = "the TLS handshake failed (is the server's certificate signed by an authority this client trusts, for this host, and within its dates?)"
        #if !canImport(Darwin)
        if error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError {  // a handshake's (see _NIOHTTPClient)
            return ("\(untrusted): \(error)", false)
        }
        #endif
        guard let error = error as? URLError else { return ("\(error)", false) }
        if [.serverCertificateHasBadDate, .serverCertificateNotYetValid].contains(error.code) {
            return ("the TLS handshake failed: the server's certificate has expired or is not valid yet: \(error.localizedDescription)", false)
        }
        if [.serverCertificateUntrusted, .serverCertificateHasUnknownRoot, .secureConnectionFailed].contains(error.code) {
            return ("\(untrusted): \(error.localizedDescription)", false)
        }
        let (text, transient) = describe(error.code, localizedDescription: error.localizedDescription)
        // What AsyncHTTPClient or SwiftNIO reported underneath (see `_NIOHTTPClient.transportError`).
        guard let underlying = error.userInfo[NSUnderlyingErrorKey] as? any Error, !(underlying is URLError) else { return (text, transient) }
        return ("\(text) (\(underlying))", transient)
    }

    private static func describe(_ code: URLError.Code, localizedDescription: String) -> (String, transient: Bool) {
        switch code {
        case .timedOut: return ("timed out (nothing received for a while)", true)
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet:
            return ("cannot connect to the server", true)
        case .networkConnectionLost: return ("the connection was lost before the answer was complete", true)
        case .badServerResponse: return ("the server closed the connection without a proper answer", true)
        default: return (localizedDescription, false)
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// `30 s`, `2.5 s`.
    private static func secondsText(_ duration: Duration) -> String {
        let seconds = (Self.seconds(duration) * 10).rounded() / 10
        return seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }

    /// `512 MiB`, `1.5 MiB`, `800 bytes`.
    static func size(_ bytes: Int) -> String {
        guard bytes >= 1 << 20 else { return "\(bytes) bytes" }
        let mib = Double(bytes) / Double(1 << 20)
        return mib == mib.rounded() ? "\(Int(mib)) MiB" : "\((mib * 10).rounded() / 10) MiB"
    }
}
