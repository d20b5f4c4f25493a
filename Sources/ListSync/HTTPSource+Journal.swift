import Foundation
import ListStore
import ListStoreWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPSource {
    /// A page of `list`'s journal after `version`, read as it arrives (see `streamedPage`), asked for
    /// with `maxPageBytes` of stages (a server honours it when its own page size is larger; one
    /// built before it did not ask sends pages of its own size, which are read all the same).
    /// - Throws: as `journal(of:after:limit:)`.
    func streamedJournal(of list: String, after version: Int, limit: Int) async throws -> JournalPage {
        try await streamedPage(
            path(list, "journal"), query: "since=\(version)&limit=\(limit)&maxBytes=\(maxPageBytes)&maxEntryBytes=\(maxPageBytes)",
            member: "commits", limit: limit
        ) { element in
            try WireDocument.decodeCommitObject(element, list: list)
        } page: { entries, rest in
            let frame = try WireDocument.decodeJournalFrame(rest)
            guard frame.list == list else { throw StreamedArrayReader.Failure(description: "a page of another list") }
            var page = JournalPage(entries: entries, hasMore: frame.hasMore, listID: frame.listID, head: frame.head, store: frame.store)
            page.tooLarge = frame.tooLarge
            return page
        }
    }

    /// A page of `list`'s head (`GET /v1/lists/{list}/pages`), read record by record as it arrives,
    /// of at most `maxBytes` or `maxPageBytes`, the smaller.
    /// - Throws: as `journal(of:after:limit:)`.
    func streamedListPage(of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int) async throws -> ListPage {
        var query = "maxBytes=\(max(1, min(maxBytes, maxPageBytes)))"
        if let version { query += "&version=\(version)" }
        if let cursor { query += "&after=\(PercentEncoding.encode(cursor.description))" }
        // A record takes at least 24 bytes on the wire: no page holds more than this many.
        let most = min(maxBytes, maxPageBytes) / 24 + 2
        return try await streamedPage(path(list, "pages"), query: query, member: "records", limit: most) { element in
            try WireDocument.decodePageRecord(element)
        } page: { records, rest in
            var page = try WireDocument.decodeListPageFrame(rest)
            guard page.list == list else { throw StreamedArrayReader.Failure(description: "a page of another list") }
            guard page.after == cursor, version == nil || page.version == version else {
                throw StreamedArrayReader.Failure(description: "a page of another version, or that does not start where it was asked to")
            }
            page.records = records
            return page
        }
    }

    /// A page of a JSON answer read as it arrives: each element of its array `member` is decoded
    /// (`element`) as soon as it is whole and its bytes let go, so that a client holds the page's
    /// elements and one element's bytes, never the whole answer's text besides. An answer with more
    /// than `limit` elements, larger than `maxAnswerBytes` in all, or that is not such a page, is
    /// refused as soon as that shows, the rest unread. `page` makes the page of the elements and the
    /// answer's other members.
    /// - Throws: `SyncError.transport` (transient for an answer cut short), the error another
    ///   answer names.
    func streamedPage<Element: Sendable, Page>(
        _ path: String, query: String, member: String, limit: Int, extraTime: Duration = .zero,
        element decode: @escaping @Sendable ([UInt8]) throws -> Element,
        page: ([Element], [UInt8]) throws -> Page
    ) async throws -> Page {
        var refresh = false
        while true {
            let (request, what) = try request(
                "GET", path, query: query, extraTime: extraTime, token: try await bearer(refresh: refresh))
            let reading = _Locked(_PageReading<Element>(member: member, limit: limit, maxBytes: maxAnswerBytes))
            let tooLarge = "the answer is larger than the \(Self.size(maxAnswerBytes)) this client accepts"
            // (`run` words a refusal of this kind as a cap reached, not as a document it cannot read.)
            let transfer = _HTTPTransfer(origin: serverOrigin, maxBytes: maxAnswerBytes, isEventStream: false) { data in
                do {
                    try reading.withLock { try $0.read(data, decode) }
                } catch let failure as StreamedArrayReader.Failure where failure.elementTooLarge {
                    throw StreamedArrayReader.Failure(description: tooLarge, elementTooLarge: true)
                }
            }
            let (http, bytes) = try await run(transfer, request, what: what, deadline: requestTimeout + extraTime)
            // A refused token is asked for anew once, when a provider gives them.
            if http.statusCode == 401, tokenProvider != nil, !refresh {
                refresh = true
                continue
            }
            guard (200..<300).contains(http.statusCode) else { throw Self.failure(status: http.statusCode, body: bytes, what: what) }
            let (elements, rest) = try reading.withLock { reading in
                do {
                    return try reading.finish()
                } catch {
                    throw SyncError.transport("\(what): \(error)", transient: true)
                }
            }
            do {
                return try page(elements, rest)
            } catch {
                throw SyncError.transport("\(url.absoluteString) answered a document this client cannot read: \(error)")
            }
        }
    }
}

/// A page being read as it arrives (see `HTTPSource.streamedPage`).
struct _PageReading<Element> {
    let limit: Int
    let maxBytes: Int
    private var reader: StreamedArrayReader
    private var elements: [Element] = []
    /// The bytes of the elements read so far, as they came.
    private var bytes = 0

    init(member: String, limit: Int, maxBytes: Int) {
        self.limit = limit
        self.maxBytes = maxBytes
        reader = StreamedArrayReader(member: member, maxElementBytes: maxBytes, maxOtherBytes: 64 << 10)
    }

    /// Reads a piece of the answer, decoding the elements it completes.
    /// - Throws: `StreamedArrayReader.Failure` (`elementTooLarge` once the elements pass
    ///   `maxBytes`), or what `decode` throws, when the answer is not a page asked for.
    mutating func read(_ data: Data, _ decode: ([UInt8]) throws -> Element) throws {
        let (limit, maxBytes) = (limit, maxBytes)
        var elements = self.elements
        var bytes = self.bytes
        self.elements = []
        defer {
            self.elements = elements
            self.bytes = bytes
        }
        try data.withUnsafeBytes { data in
            try reader.read(data) { text in
                guard elements.count < limit else {
                    throw StreamedArrayReader.Failure(description: "more than the \(limit) entries asked for")
                }
                bytes += text.count
                guard bytes <= maxBytes else {
                    throw StreamedArrayReader.Failure(description: "the page is larger than \(maxBytes) bytes", elementTooLarge: true)
                }
                elements.append(try decode(text))
            }
        }
    }

    /// The elements and the answer's other members, once the whole answer was read.
    /// - Throws: `StreamedArrayReader.Failure` when the answer ended before its document did.
    func finish() throws -> (elements: [Element], rest: [UInt8]) {
        (elements, try reader.finish())
    }
}
