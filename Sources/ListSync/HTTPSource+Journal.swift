import Foundation
import ListStore
import ListStoreWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPSource {
    /// A page of `list`'s journal after `version`, read as it arrives: each entry is decoded as soon
    /// as it is whole and its bytes let go, so that a pull holds the page's entries and one entry's
    /// bytes, never the whole answer's text. The page is asked for with `maxPageBytes`; an answer that
    /// holds more entries than asked, more bytes than asked (past its first entry), an entry over
    /// `maxAnswerBytes`, or that is not a journal page, is refused as soon as that shows, the rest
    /// unread.
    /// - Throws: as `journal(of:after:limit:)`.
    func streamedJournal(of list: String, after version: Int, limit: Int) async throws -> JournalPage {
        let query = "since=\(version)&limit=\(limit)&maxBytes=\(maxPageBytes)"
        var refresh = false
        while true {
            let (request, what) = try request("GET", path(list, "journal"), query: query, token: try await bearer(refresh: refresh))
            let reading = _Locked(
                _JournalReading(list: list, limit: limit, maxPageBytes: maxPageBytes, maxEntryBytes: maxAnswerBytes))
            let transfer = _HTTPTransfer(origin: serverOrigin, maxBytes: maxAnswerBytes, isEventStream: false) { data in
                try reading.withLock { try $0.read(data) }
            }
            let (http, bytes) = try await run(transfer, request, what: what, deadline: requestTimeout)
            // A refused token is asked for anew once, when a provider gives them.
            if http.statusCode == 401, tokenProvider != nil, !refresh {
                refresh = true
                continue
            }
            guard (200..<300).contains(http.statusCode) else { throw Self.failure(status: http.statusCode, body: bytes, what: what) }
            return try reading.withLock { reading in
                do {
                    return try reading.finish()
                } catch let incomplete as _JournalReading.Incomplete {
                    throw SyncError.transport("\(what): \(incomplete.description)", transient: true)
                } catch {
                    throw SyncError.transport("\(url.absoluteString) answered a document this client cannot read: \(error)")
                }
            }
        }
    }
}

/// A journal page being read as it arrives (see `HTTPSource.streamedJournal`).
struct _JournalReading {
    /// The answer ended before its document did: a server that went away mid-answer.
    struct Incomplete: Error, CustomStringConvertible {
        var description: String
    }

    let list: String
    let limit: Int
    let maxPageBytes: Int
    private var reader: StreamedArrayReader
    private var entries: [JournalEntry] = []
    /// The stages' bytes of the entries so far (what the server's page size counts).
    private var stageBytes = 0

    init(list: String, limit: Int, maxPageBytes: Int, maxEntryBytes: Int) {
        self.list = list
        self.limit = limit
        self.maxPageBytes = maxPageBytes
        reader = StreamedArrayReader(member: "commits", maxElementBytes: maxEntryBytes, maxOtherBytes: 64 << 10)
    }

    /// Reads a piece of the answer, decoding the entries it completes.
    /// - Throws: `StreamedArrayReader.Failure` or `DecodingError` when the answer is not a page asked for.
    mutating func read(_ data: Data) throws {
        let (list, limit, maxPageBytes) = (list, limit, maxPageBytes)
        var entries = self.entries
        var stageBytes = self.stageBytes
        self.entries = []
        defer {
            self.entries = entries
            self.stageBytes = stageBytes
        }
        try reader.read(data) { element in
            guard entries.count < limit else {
                throw StreamedArrayReader.Failure(description: "more than the \(limit) entries asked for")
            }
            let entry = try WireDocument.decodeCommitObject(element, list: list)
            stageBytes += entry.stagesJSON.count
            // A page holds at least one entry, and more only within the bytes asked for.
            guard entries.isEmpty || stageBytes <= maxPageBytes else {
                throw StreamedArrayReader.Failure(description: "a page larger than the \(maxPageBytes) bytes asked for")
            }
            entries.append(entry)
        }
    }

    /// The page, once the whole answer was read.
    /// - Throws: `Incomplete` when the answer ended early; `DecodingError` when it is not a page of
    ///   `list`.
    func finish() throws -> JournalPage {
        let rest: [UInt8]
        do {
            rest = try reader.finish()
        } catch {
            throw Incomplete(description: "the answer ended before its document did")
        }
        let frame = try WireDocument.decodeJournalFrame(rest)
        guard frame.list == list else { throw StreamedArrayReader.Failure(description: "a page of another list") }
        return JournalPage(entries: entries, hasMore: frame.hasMore)
    }
}
