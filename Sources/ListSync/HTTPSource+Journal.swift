import Foundation
import ListStore
import ListStoreWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPSource {
    /// A page of `list`'s journal after `version`, read as it arrives (see `streamedPage`), asked for
    /// with `maxPageBytes`: an answer with more entries than asked, or more bytes of stages than
    /// asked past its first entry, is refused as soon as that shows.
    /// - Throws: as `journal(of:after:limit:)`.
    func streamedJournal(of list: String, after version: Int, limit: Int) async throws -> JournalPage {
        let maxPageBytes = maxPageBytes
        return try await streamedPage(
            path(list, "journal"), query: "since=\(version)&limit=\(limit)&maxBytes=\(maxPageBytes)", member: "commits", limit: limit,
            maxPageBytes: maxPageBytes
        ) { element in
            let entry = try WireDocument.decodeCommitObject(element, list: list)
            return (entry, entry.stagesJSON.count)
        } page: { entries, rest in
            let frame = try WireDocument.decodeJournalFrame(rest)
            guard frame.list == list else { throw StreamedArrayReader.Failure(description: "a page of another list") }
            return JournalPage(entries: entries, hasMore: frame.hasMore)
        }
    }

    /// A page of a JSON answer read as it arrives: each element of its array `member` is decoded
    /// (`element`) as soon as it is whole and its bytes let go, so that a client holds the page's
    /// elements and one element's bytes, never the whole answer's text. An answer with more than
    /// `limit` elements, more than `maxPageBytes` (as `element` counts them) past its first, an
    /// element over `maxAnswerBytes`, or that is not such a page, is refused as soon as that shows,
    /// the rest unread. `page` makes the page of the elements and the answer's other members.
    /// - Throws: `SyncError.transport` (transient for an answer cut short), the error another
    ///   answer names.
    func streamedPage<Element: Sendable, Page>(
        _ path: String, query: String, member: String, limit: Int, maxPageBytes: Int?, extraTime: Duration = .zero,
        element decode: @escaping @Sendable ([UInt8]) throws -> (Element, bytes: Int),
        page: ([Element], [UInt8]) throws -> Page
    ) async throws -> Page {
        var refresh = false
        while true {
            let (request, what) = try request(
                "GET", path, query: query, extraTime: extraTime, token: try await bearer(refresh: refresh))
            let reading = _Locked(
                _PageReading<Element>(member: member, limit: limit, maxPageBytes: maxPageBytes, maxElementBytes: maxAnswerBytes))
            let transfer = _HTTPTransfer(origin: serverOrigin, maxBytes: maxAnswerBytes, isEventStream: false) { data in
                try reading.withLock { try $0.read(data, decode) }
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
    let maxPageBytes: Int?
    private var reader: StreamedArrayReader
    private var elements: [Element] = []
    /// The bytes of the elements so far, as the page's size counts them.
    private var bytes = 0

    init(member: String, limit: Int, maxPageBytes: Int?, maxElementBytes: Int) {
        self.limit = limit
        self.maxPageBytes = maxPageBytes
        reader = StreamedArrayReader(member: member, maxElementBytes: maxElementBytes, maxOtherBytes: 64 << 10)
    }

    /// Reads a piece of the answer, decoding the elements it completes.
    /// - Throws: `StreamedArrayReader.Failure`, or what `decode` throws, when the answer is not a
    ///   page asked for.
    mutating func read(_ data: Data, _ decode: ([UInt8]) throws -> (Element, bytes: Int)) throws {
        let (limit, maxPageBytes) = (limit, maxPageBytes)
        var elements = self.elements
        var bytes = self.bytes
        self.elements = []
        defer {
            self.elements = elements
            self.bytes = bytes
        }
        try reader.read(data) { text in
            guard elements.count < limit else {
                throw StreamedArrayReader.Failure(description: "more than the \(limit) entries asked for")
            }
            let (element, size) = try decode(text)
            bytes += size
            // A page holds at least one element, and more only within the bytes asked for.
            if let maxPageBytes, !elements.isEmpty, bytes > maxPageBytes {
                throw StreamedArrayReader.Failure(description: "a page larger than the \(maxPageBytes) bytes asked for")
            }
            elements.append(element)
        }
    }

    /// The elements and the answer's other members, once the whole answer was read.
    /// - Throws: `StreamedArrayReader.Failure` when the answer ended before its document did.
    func finish() throws -> (elements: [Element], rest: [UInt8]) {
        (elements, try reader.finish())
    }
}
