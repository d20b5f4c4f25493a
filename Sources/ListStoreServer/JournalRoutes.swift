import Foundation
import Hummingbird
import ListDiff
import ListJSON
import ListStoreCore
import ListStoreWire
import HTTPTypes
import NIOCore
import ServiceLifecycle

/// The `/v1` endpoints of `JournalServer`.
struct JournalRoutes: Sendable {
    let store: any ListStoreEngine
    /// The table of requests waiting for commits: long polls and event streams.
    let watcher: HeadWatcher
    /// What checks every request against the route table (and answers `GET /v1/access`).
    let access: AccessMiddleware
    /// What `GET /metrics` shows; commits and merges are timed into it.
    let metrics: ServerMetrics
    /// The journal pages being read, shared by identical requests under way.
    let pages: JournalPages
    /// The pages of events being read, shared by the event streams at one version.
    let eventPages: EventPages
    /// The pages of the store feed being read, shared by its event streams at one position.
    let feedPages: FeedPages
    let configuration: JournalServer.Configuration
    let state: ServerState

    /// A route: method, path under the router, and its handler. What it needs of the request's
    /// identity is `RouteTable`'s, which `AccessMiddleware` checks before the handler runs.
    typealias Route = (method: HTTPRequest.Method, path: String, handler: @Sendable (Request, ServerRequestContext) async throws -> Response)

    /// Every route of the server: the only place routes are added.
    func add(to router: Router<ServerRequestContext>) {
        let routes: [Route] = [
            // The API's description (no token: it describes the API, not the store's lists).
            (.get, "v1/openapi.json", { _, _ in Self.json(Self.openAPIDocument) }),
            (.get, "health", { _, context in try await health(context) }),
            (.get, "v1/access", { request, context in try await access.access(request, logger: context.logger) }),
            (.get, "v1/store", { _, _ in Self.json(WireDocument.identity(try await store.identity())) }),
            (.get, "v1/changes", { request, context in try await changes(request, context) }),
            (.get, "v1/events", { request, context in try await feedEvents(request, context) }),
            (.get, "v1/lists", { _, context in
                var lists = try await store.lists()
                if case .user(let token) = context.identity {
                    let access = state.access
                    lists.removeAll { access?.grant(on: $0.name, to: token) == nil }
                }
                return Self.json(WireDocument.lists(lists))
            }),
            (.get, "v1/lists/:list", { _, context in
                let list = try Self.list(context)
                let summary = try await store.summary(of: list)
                let replicaOf = try await (store as? any ReplicaStore)?.replicaSource(of: list)
                return Self.json(WireDocument.summary(summary, replicaOf: replicaOf))
            }),
            (.get, "v1/lists/:list/snapshot", { request, context in
                let list = try Self.list(context)
                let at = try Self.integer(request, "at")
                return Self.json(try await store.snapshot(of: list, at: at).documentJSON)
            }),
            (.get, "v1/lists/:list/journal", { request, context in try await journal(request, context) }),
            (.get, "v1/lists/:list/pages", { request, context in
                let list = try Self.list(context)
                let version = try Self.integer(request, "version")
                let after = request.uri.queryParameters["after"].map { ListPage.Cursor(String($0)) }
                let asked = try Self.integer(request, "maxBytes")
                guard asked != 0 else { throw APIError.invalidArgument("'maxBytes' must be at least 1") }
                let maxBytes = min(asked ?? .max, configuration.maxPageBytes)
                // Read and encoded in turn: the server holds a few pages however many clients sync.
                return Self.json(
                    try await state.pageReads.taking {
                        WireDocument.listPage(try await store.page(of: list, at: version, after: after, maxBytes: maxBytes))
                    })
            }),
            (.get, "v1/lists/:list/diff", { request, context in
                let list = try Self.list(context)
                guard let from = try Self.integer(request, "from") else { throw APIError.invalidArgument("'from' is required") }
                let to = try Self.integer(request, "to")
                return Self.json(try await Self.diff(store, list, from: from, to: to))
            }),
            (.post, "v1/lists/:list/commits", { request, context in try await commit(request, context) }),
            (.delete, "v1/lists/:list", { _, context in
                let list = try Self.list(context)
                return Self.json(WireDocument.deleted(list, version: try await store.deleteList(list)))
            }),
            (.post, "v1/lists/:list/pushes", { request, context in try await push(request, context) }),
            (.get, "v1/lists/:list/pushes/:client", { request, context in try await pushes(request, context) }),
            (.get, "v1/lists/:list/events", { request, context in try await events(request, context) }),
            (.put, "v1/lists/:list/blobs/:blob", { request, context in try await uploadBlob(request, context) }),
            (.get, "v1/lists/:list/blobs/:blob", { request, context in try await downloadBlob(request, context) }),
            (.get, "v1/lists/:list/blobs/:blob/upload", { _, context in try await blobUpload(context) }),
            (.put, "v1/lists/:list/consumers/:name", { request, context in
                let list = try Self.list(context)
                let name = try Self.parameter(context, "name")
                let body = try await Self.body(of: request, upTo: 64 << 10)
                guard let value = try? JSONValue(parsing: Array(buffer: body)), let version = value["version"]?.intValue, version >= 0 else {
                    throw APIError(.badRequest, "invalidArgument", "the body must be {\"version\": V} with V ≥ 0")
                }
                _ = try await store.registerConsumer(name, of: list, at: version)
                return Self.json(WireDocument.consumer(name, of: list, version: version))
            }),
            (.get, "metrics", { _, _ in
                let text = await metrics.scrape(store: store, state: state, watcher: watcher)
                return Response(
                    status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: text)))
            }),
        ]
        for route in routes {
            router.on(RouterPath(route.path), method: route.method, use: route.handler)
        }
    }

    /// What `identity` may do with `list`: everything with the service token, what the access
    /// rules grant a user's token (`nil`: nothing, not even knowing the list exists).
    /// - Complexity: O(rules).
    static func grant(on list: String, to identity: AccessIdentity, access: AccessConfiguration?) -> AccessGrant? {
        switch identity {
        case .service: .admin
        case .user(let token): access?.grant(on: list, to: token)
        }
    }

    /// Throws what a new request of `token` that needs `need` on `list` would be answered under
    /// `access` (401, 404 `listNotFound` or 403), so that a long poll or an event stream whose
    /// access a reload took away ends as if it came now.
    /// - Complexity: that of `AccessConfiguration.recheck(_:now:)` and of the rules' matching.
    static func recheck(_ token: AccessToken, on list: String, needing need: AccessGrant, under access: AccessConfiguration?, storeLocation: String) throws {
        guard let access else {
            throw AccessMiddleware.unauthorized("this server needs 'Authorization: Bearer <token>' with its token", invalidToken: true)
        }
        let still: AccessToken
        do {
            still = try access.recheck(token)
        } catch let refusal as AccessRefusal {
            throw AccessMiddleware.unauthorized(refusal.description, invalidToken: true)
        } catch {
            throw AccessMiddleware.unauthorized("the token is not accepted", invalidToken: true)
        }
        try check(access.grant(on: list, to: still), on: list, needing: need, storeLocation: storeLocation)
    }

    /// Throws unless `grant` (`nil`: none) allows what `need` asks of `list`: a list the token
    /// may not read is not found (as one that does not exist), one it may read but not so is 403.
    static func check(_ grant: AccessGrant?, on list: String, needing need: AccessGrant, storeLocation: String) throws {
        guard let grant else { throw StoreError.listNotFound(list, in: storeLocation) }
        guard grant >= need else { throw APIError(.forbidden, "forbidden", "this token may \(grant) list '\(list)' but not \(need) it") }
    }

    /// The generation of the access rules under which the request's user token may read `list`
    /// (`nil` for the service token): what a long poll or an event stream rests on.
    /// - Throws: the answer a new request would get (see `recheck(_:on:needing:under:storeLocation:)`).
    func readingGeneration(of list: String, _ context: ServerRequestContext) throws -> UInt64? {
        guard let token = Self.userToken(context) else { return nil }
        let (access, generation) = state.accessInForce
        try Self.recheck(token, on: list, needing: .read, under: access, storeLocation: store.location)
        return generation
    }

    /// Whether a stream or a poll may go on reading a list.
    enum Reading: Equatable {
        /// It may, resting on the access rules of this generation (`nil`: the service token's).
        case allowed(UInt64?)
        /// The rules in force took it away.
        case refused
    }

    /// Whether `token`, whose reading of `list` rested on the rules of generation `checked` (`nil`:
    /// the service token's), may still read it, and under which generation.
    /// - Complexity: O(1) while the rules do not change; then that of `recheck(_:on:needing:under:storeLocation:)`.
    static func reading(_ list: String, as token: AccessToken?, after checked: UInt64?, state: ServerState, storeLocation: String) -> Reading {
        guard let token, let checked else { return .allowed(nil) }
        let (access, generation) = state.accessInForce
        if generation == checked { return .allowed(checked) }
        if (try? recheck(token, on: list, needing: .read, under: access, storeLocation: storeLocation)) == nil { return .refused }
        return .allowed(generation)
    }

    /// How long the request's user token is still accepted (`nil` for the service token).
    static func lifetime(of context: ServerRequestContext) -> Duration? {
        userToken(context).map { $0.lifetime() }
    }

    /// The author a user's commit or push is recorded under: its token's `sub` (`nil` for the
    /// service token, whose writes record the body's author).
    /// - Throws: 403 `forbidden` for a token without a string `sub`: its writes would have no author.
    static func author(of context: ServerRequestContext) throws -> String?? {
        guard let token = userToken(context) else { return .none }
        guard let subject = token.subject else {
            throw APIError(.forbidden, "forbidden", "the token's sub is not a string: a user's commits and pushes are recorded under it")
        }
        return .some(subject)
    }

    /// The user's token of a request (`nil` for the service token).
    static func userToken(_ context: ServerRequestContext) -> AccessToken? {
        if case .user(let token) = context.identity { token } else { nil }
    }

    /// `GET /health`, for load balancers: 200 when a read of the store's identity answers within a
    /// second, 503 `storeUnavailable` otherwise.
    private func health(_ context: ServerRequestContext) async throws -> Response {
        if let failure = await Self.probe(store, within: Self.healthLimit) {
            context.logger.warning("health check: the store does not answer: \(failure)")
            var error = APIError(.serviceUnavailable, "storeUnavailable", "the store does not answer")
            error.headers[.retryAfter] = String(APIError.storeRetryAfterSeconds)
            throw error
        }
        return Self.json(Array(#"{"schemaVersion":1,"status":"ok"}"#.utf8))
    }

    /// How long `GET /health` waits for the store.
    static let healthLimit = Duration.seconds(1)

    /// Reads `store`'s identity and returns `nil` when it answers within `limit`, or what went
    /// wrong, without waiting past `limit` for a read that does not end (it is cancelled then).
    static func probe(_ store: any ListStoreEngine, within limit: Duration) async -> String? {
        do {
            return try await Bounded.run(within: limit, { try await store.identity() }) == nil ? "no answer within \(limit)" : nil
        } catch {
            return "\(error)"
        }
    }

    /// The API's OpenAPI 3.1 document (Sources/ListStoreServer/openapi.json).
    static let openAPIDocument = ByteBuffer(bytes: PackageResources.openapi_json)

    // MARK: - Endpoints

    /// The diff document from `from` to `to` (default: the head).
    private static func diff(_ store: any ListStoreEngine, _ list: String, from: Int, to: Int?) async throws -> [UInt8] {
        let (_, target, changeset) = try await store.changeset(of: list, from: from, to: to)
        return WireDocument.diff(changeset, from: from, to: target)
    }

    /// The journal after `since`; with `wait`, an empty answer is held until a commit lands. Its
    /// caching headers are those of DeployingBehindACache.md, “What the server says about caching”.
    private func journal(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let list = try Self.list(context)
        let parameters = request.uri.queryParameters  // parsed anew on each access
        let query = try JournalQuery(
            since: parameters["since"], limit: parameters["limit"], wait: parameters["wait"], maxBytes: parameters["maxBytes"],
            maxEntryBytes: parameters["maxEntryBytes"], cursor: parameters["cursor"], configuration: configuration)
        let (since, wait, key) = (query.since, query.wait, query.page(of: list))
        // Identical requests under way share one read and one encoding (long polls woken together).
        // `generation`: only the read of a woken long poll may get a page kept from another's.
        let read = { [pages] (generation: UInt64?) in try await pages.page(key, generation: generation) }
        var page = try await read(nil)
        if wait > 0, page.empty {
            let slot = try streamSlot()
            defer { withExtendedLifetime(slot) {} }
            var version = since ?? 0
            if since == nil { version = try await store.summary(of: list).baseVersion }
            // A user's long poll ends when its token does: the client asks again with a fresh one.
            let deadline = ContinuousClock.now + min(Duration.seconds(wait), Self.lifetime(of: context) ?? .seconds(wait))
            // When the access rules change, it is answered as a new request would be.
            var checked = try readingGeneration(of: list, context)
            // A client that hangs up ends its wait, and frees its place, at once.
            let hangUp = HangUpWatch(context.channel)
            while true {
                let (timeout, generation) = (deadline - ContinuousClock.now, checked)
                let woken = await watcher.wait(for: list, after: version, timeout: timeout, accessGeneration: generation, hangUp: hangUp)
                // Nobody hears an answer now: counted as a request whose client hung up (499).
                if hangUp.isClosed { throw CancellationError() }
                if woken {
                    page = try await read(store.commitGeneration())
                }
                // The rules changed during the wait or the read: the answer is the new request's.
                if let generation, state.accessGeneration != generation {
                    checked = try readingGeneration(of: list, context)
                    if !woken, ContinuousClock.now < deadline { continue }
                }
                // Woken with nothing new (the watcher's first read wakes every wait): wait on.
                if woken, page.empty, ContinuousClock.now < deadline, !watcher.isClosed { continue }
                break
            }
        }
        guard let etag = page.etag else {
            var response = Self.json(page.body)
            response.headers[.cacheControl] = "no-store"
            response.headers[.accelExpires] = "0"
            if wait > 0 {
                // A long poll that ended without a commit: kept by a cache only when asked with a
                // cursor, since a client without one would ask this URL again.
                let now = Date().timeIntervalSince1970
                response.headers[.listStoreCursor] = String(LongPollCursor.next(after: query.cursor, wait: wait, now: now))
                if query.cursor != nil { response.headers[.accelExpires] = String(wait) }
            }
            return response
        }
        var headers: HTTPFields = [.eTag: etag, .accelExpires: Self.journalCacheSeconds, .cacheControl: "no-cache"]
        if Self.holds(request, etag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: page.body))
    }

    /// How long a cache in front of the server may keep a journal answer that holds commits.
    static let journalCacheSeconds = "60"

    /// Commits a snapshot document.
    private func commit(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let list = try Self.list(context)
        let body = try await Self.body(of: request, upTo: configuration.maxBodyBytes)
        let value: JSONValue
        let sections: [ListSection]
        do {
            value = try JSONValue(parsing: Array(buffer: body))
            sections = try SnapshotDocument.sections(decoding: value)
        } catch {
            throw APIError(.badRequest, StoreError.Code.invalidSnapshot.description, "not a snapshot document: \(error)")
        }
        let expectedVersion = try Self.expectedVersion(value)
        // A user's commit is recorded as theirs, whatever the body says.
        let author = try Self.author(of: context) ?? Self.optionalString(value, "author")
        let message = try Self.optionalString(value, "message")
        let result = try await metrics.timing(metrics.commitDuration) {
            try await store.commit(sections, to: list, expectedVersion: expectedVersion, author: author, message: message)
        }
        return Self.json(WireDocument.commit(result))
    }

    /// Merges a replica's push document; a push already recorded is answered from the record.
    private func push(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let list = try Self.list(context)
        let body = try await Self.body(of: request, upTo: configuration.maxBodyBytes)
        let push: Push
        do {
            push = try WireDocument.decodePush(Array(buffer: body))
        } catch {
            throw APIError(.badRequest, APIError.invalidPushCode, "not a push document: \(error)")
        }
        // A user's push is journaled as theirs; the push itself is recorded as sent, so that its
        // retries are known.
        let author = try Self.author(of: context) ?? push.author
        // A client that hangs up stops its merge, which would take a core for nobody (the replica
        // pushes again, merged once).
        let store = store
        let answer = try await state.countingMerge {
            try await metrics.timing(metrics.mergeDuration) {
                try await HangUpWatch(context.channel).run { try await store.merge(push, into: list, authoredBy: author) }
            }
        }
        return Self.json(WireDocument.pushAnswer(answer))
    }

    /// The pushes of a client that the list recorded, sequence numbers `from`…`to` (see
    /// `Store.pushes(from:to:seqs:)`).
    private func pushes(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let list = try Self.list(context)
        let client = try Self.parameter(context, "client")
        let from = try Self.integer(request, "from") ?? 1
        let to = try Self.integer(request, "to") ?? Int.max
        guard from <= to else { throw APIError.invalidArgument("'from' must be at most 'to'") }
        let answers = try await store.pushes(from: client, to: list, seqs: from...to)
        return Self.json(WireDocument.pushes(answers, list: list))
    }

    /// A list's Server-Sent Events from `since` (or a reconnecting client's `Last-Event-ID`) on.
    private func events(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let list = try Self.list(context)
        // Both are checked, though a reconnecting client's Last-Event-ID wins.
        let asked = try Self.integer(request, "since")
        let since = try Self.lastEventID(request) ?? asked
        let slot = try streamSlot()
        let maxBytes = configuration.maxPageBytes
        // Read before the stream starts, so that its errors get a status.
        let first = try await eventPages.page(of: list, after: since, maxBytes: maxBytes)
        // The list the stream follows: one deleted and made again under its name is another.
        let listID = first.listID
        // The store's epoch: the stream ends when it changes (`advance-epoch` after a restore).
        let known = state.storeIdentity
        let identity = if let known { known } else { try await store.identity() }
        let base = since == nil ? try await store.summary(of: list).baseVersion : 0
        let (store, state, eventPages, watcher, logger) = (store, state, eventPages, watcher, context.logger)
        // It ends when a change of the access rules takes its list away.
        let token = Self.userToken(context)
        let checked = _Locked(try readingGeneration(of: list, context))
        /// A page as what the stream writes; a page of another list of that name ends it.
        let events = { @Sendable (page: EventPage, cursor: Int) -> EventStream<Int>.Read in
            // The list was deleted and made again since the stream started: it ends, as long polls 404.
            if let listID, let read = page.listID, read != listID {
                return .end(Self.errorEvent(code: StoreError.Code.listNotFound.description, message: Self.listDeletedMessage(list)))
            }
            return .events(page.events, after: page.lastVersion ?? cursor, hasMore: page.hasMore)
        }
        let stream = EventStream<Int>(
            first: events(first, since ?? base), start: since ?? base,
            read: { cursor in
                do {
                    return events(try await eventPages.page(of: list, after: cursor, maxBytes: maxBytes, generation: store.commitGeneration()), cursor)
                } catch {
                    var api = APIError.from(error, logger: logger, storeLocation: store.location)
                    // A list made again under its name: the end says the list was deleted.
                    if let listID, let summary = try? await store.summary(of: list), summary.id != listID {
                        api = APIError(.notFound, StoreError.Code.listNotFound.description, Self.listDeletedMessage(list))
                    }
                    return .end(Self.errorEvent(code: api.code, message: api.message))
                }
            },
            wait: { cursor, timeout, generation, hangUp in
                await watcher.wait(for: list, after: cursor, timeout: timeout, accessGeneration: generation, hangUp: hangUp)
            },
            keepAlive: { cursor in (ByteBuffer(bytes: Array(": keep-alive\n\n".utf8)), cursor) },
            access: {
                checked.withLock { generation in
                    guard case .allowed(let still) = Self.reading(list, as: token, after: generation, state: state, storeLocation: store.location)
                    else { return .refused }
                    generation = still
                    return .allowed(still)
                }
            })
        // A user's stream ends when its token expires; the client resumes with a fresh one.
        return stream.response(
            channel: context.channel, slot: slot, watcher: watcher, state: state, identity: identity,
            keepAliveInterval: configuration.keepAliveInterval, expiry: Self.lifetime(of: context).map { ContinuousClock.now + $0 })
    }

    // MARK: - Helpers

    /// The error event that ends a stream started before the store's epoch changed to `identity`'s
    /// (`advance-epoch` after a restore): the client resyncs.
    static func epochChangedEvent(_ identity: StoreIdentity) -> ByteBuffer {
        errorEvent(
            code: "cursorMismatch",
            message: "the store was restored since the stream started (epoch \(identity.epoch) now): follow again from the start, reading the lists anew")
    }

    /// The `event: error` that ends an event stream, with the error document of `code` and `message`.
    static func errorEvent(code: String, message: String) -> ByteBuffer {
        ByteBuffer(bytes: Array("event: error\ndata: ".utf8) + WireDocument.error(code: code, message: message) + Array("\n\n".utf8))
    }

    /// What ends the event stream of a list deleted since the stream started.
    static func listDeletedMessage(_ list: String) -> String { "the list '\(list)' was deleted since the stream started" }

    /// A place among the long polls and event streams, or 503 when they are all taken.
    func streamSlot() throws -> ConnectionLimiter.Slot {
        guard let slot = state.streams.slot() else {
            throw APIError.noPlaceToWait
        }
        return slot
    }

    /// Whether the request's `If-None-Match` names `tag` (or `*`): the client holds the answer (304).
    static func holds(_ request: Request, _ tag: String) -> Bool {
        request.headers[.ifNoneMatch]?.split(separator: ",").contains {
            let named = $0.trimmingCharacters(in: .whitespaces)
            return named == tag || named == "*"
        } == true
    }

    static func json(_ bytes: [UInt8]) -> Response {
        json(ByteBuffer(bytes: bytes))
    }

    static func json(_ buffer: ByteBuffer) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: buffer))
    }

    /// The request's body, at most `limit` bytes: 413 `bodyTooLarge` beyond, 400 `bodyIncomplete`
    /// when it ends early.
    static func body(of request: Request, upTo limit: Int) async throws -> ByteBuffer {
        let tooLarge = APIError(.contentTooLarge, "bodyTooLarge", "the request body is larger than \(limit) bytes")
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit { throw tooLarge }
        var request = request
        do {
            return try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw tooLarge
        } catch {
            throw APIError(.badRequest, "bodyIncomplete", "the request body ended before it was complete")
        }
    }

    /// The string member `name` of a body, `nil` when absent or null; 400 when it is not a string.
    static func optionalString(_ value: JSONValue, _ name: String) throws -> String? {
        guard let member = value[name], !member.isNull else { return nil }
        guard let string = member.stringValue else { throw APIError.invalidArgument("\(name): expected a string") }
        return string
    }

    /// The path's list, percent-decoded; a name no list can have is refused on every route (400
    /// `invalidListName`), before anything is looked for.
    static func list(_ context: ServerRequestContext) throws -> String {
        let list = try parameter(context, "list")
        try _Names.checkList(list)
        return list
    }

    /// A path parameter, percent-decoded.
    static func parameter(_ context: ServerRequestContext, _ name: String) throws -> String {
        guard let raw = context.parameters.get(name), let decoded = PercentEncoding.decode(raw) else {
            throw APIError.invalidArgument("the path's \(name) is not valid percent-encoded UTF-8")
        }
        return decoded
    }

    /// The `expectedVersion` of a commit body, `nil` when absent or null.
    static func expectedVersion(_ value: JSONValue) throws -> Int? {
        guard let expected = value["expectedVersion"], !expected.isNull else { return nil }
        guard let version = expected.intValue, version >= 0 else {
            throw APIError(.badRequest, "invalidArgument", "expectedVersion: expected a non-negative integer")
        }
        return version
    }

    /// The version of a reconnecting event stream's `Last-Event-ID`, `nil` when absent.
    static func lastEventID(_ request: Request) throws -> Int? {
        guard let last = request.headers[.lastEventID] else { return nil }
        guard let version = Int(last), version >= 0 else { throw APIError.invalidArgument("Last-Event-ID must be a version") }
        return version
    }

    /// A non-negative integer query parameter, `nil` when absent.
    static func integer(_ request: Request, _ name: String) throws -> Int? {
        try integer(request.uri.queryParameters[name[...]], name)
    }

    /// The query parameter `name`'s value `text` as a non-negative integer, `nil` when absent.
    static func integer(_ text: Substring?, _ name: String) throws -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), value >= 0 else {
            throw APIError.invalidArgument("'\(name)' must be a non-negative integer, not '\(text)'")
        }
        return value
    }
}

extension HTTPField.Name {
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
    /// How long nginx may keep an answer (it reads the field before `Cache-Control`, and does not
    /// pass it on).
    static let accelExpires = HTTPField.Name("X-Accel-Expires")!
    /// The cursor of an empty long poll, which its followers ask again with (`LongPollCursor`).
    static let listStoreCursor = HTTPField.Name("X-ListStore-Cursor")!
}
