import Hummingbird

/// What a request for a list's journal asks (`GET /v1/lists/{list}/journal`), checked against the
/// server's limits.
struct JournalQuery: Sendable, Equatable {
    /// The version after which the page starts (`nil`: from the list's first retained entry).
    var since: Int?
    /// The most entries of the page.
    var limit: Int
    /// How many seconds an empty answer may be held for a commit (0: none).
    var wait: Int
    /// The cursor of the empty long poll the client asks again after (see `LongPollCursor`), `nil`
    /// for none: it only makes the request's URL differ from that one's, which a cache kept.
    var cursor: Int?
    /// The most bytes of stages of the page: the client's, when smaller than the server's.
    var maxBytes: Int
    /// The largest entry the client takes (`.max`: any); a larger one is named, not sent.
    var maxEntryBytes: Int

    /// The query of the parameters' texts (`nil` when absent).
    /// - Throws: `APIError` (400 `invalidArgument`) for a value that is not a non-negative
    ///   integer, a `limit` or `wait` beyond the server's, a `maxBytes` of 0, or a `cursor` past
    ///   `LongPollCursor.max`.
    /// - Complexity: O(length of the texts).
    init(
        since: Substring?, limit: Substring?, wait: Substring?, maxBytes: Substring?, maxEntryBytes: Substring? = nil,
        cursor: Substring? = nil, configuration: JournalServer.Configuration
    ) throws {
        self.since = try JournalRoutes.integer(since, "since")
        self.limit = try JournalRoutes.integer(limit, "limit") ?? 100
        guard self.limit <= configuration.maxLimit else {
            throw APIError.invalidArgument("'limit' must be at most \(configuration.maxLimit)")
        }
        self.wait = try JournalRoutes.integer(wait, "wait") ?? 0
        guard Duration.seconds(self.wait) <= configuration.maxWait else {
            throw APIError.invalidArgument("'wait' must be at most \(configuration.maxWait.components.seconds) seconds")
        }
        self.cursor = try JournalRoutes.integer(cursor, "cursor")
        if let given = self.cursor, given > LongPollCursor.max {
            throw APIError.invalidArgument("'cursor' must be at most \(LongPollCursor.max)")
        }
        // A client may ask for smaller pages than the server's, so that its memory follows them.
        let askedBytes = try JournalRoutes.integer(maxBytes, "maxBytes")
        guard askedBytes != 0 else { throw APIError.invalidArgument("'maxBytes' must be at least 1") }
        self.maxBytes = min(askedBytes ?? .max, configuration.maxPageBytes)
        // A client that holds at most this much of one entry is told of a larger one instead of sent it.
        let entryBytes = try JournalRoutes.integer(maxEntryBytes, "maxEntryBytes")
        guard entryBytes != 0 else { throw APIError.invalidArgument("'maxEntryBytes' must be at least 1") }
        self.maxEntryBytes = entryBytes ?? .max
    }

    /// The page this query reads of `list`.
    func page(of list: String) -> JournalPages.Key {
        JournalPages.Key(list: list, since: since, limit: limit, maxBytes: maxBytes, maxEntryBytes: maxEntryBytes)
    }
}
