import Foundation
import ListStore
import ListStoreWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A list's blobs over HTTP (`/v1/lists/{list}/blobs/{blob}`), a piece at a time both ways: a
/// download is a series of `Range` requests of 4 MiB; an upload is one `PUT` whose body streams
/// (off Apple platforms, through AsyncHTTPClient), or a series of `PUT`s of 4 MiB parts with
/// `Content-Range` (on Apple platforms, whose URLSession takes a body whole), so that neither side
/// holds more than a piece of a blob, and an upload cut off resumes after the parts that came.
extension HTTPSource {
    /// The most bytes one upload request sends: a multiple of the store's part size, so that every
    /// request but the last leaves whole parts on the server.
    static let blobPieceBytes = 4 * _BlobParts.partSize

    public func blob(_ hash: ContentHash, of list: String) async throws -> BlobStatus? {
        let (http, bytes, what) = try await exchange("GET", path(list, "blobs", BlobReference.id(of: hash), "upload"))
        if http.statusCode == 404, (try? WireDocument.decodeError(bytes))?.code == "blobNotFound" { return nil }
        guard (200..<300).contains(http.statusCode) else { throw Self.failure(status: http.statusCode, body: bytes, what: what) }
        return try decode(bytes, WireDocument.decodeBlobStatus)
    }

    public func readBlob(_ hash: ContentHash, of list: String, from offset: Int, maxBytes: Int) async throws -> [UInt8] {
        let (id, count) = (BlobReference.id(of: hash), min(maxBytes, _BlobParts.maxRead))
        guard offset >= 0 else { throw StoreError(.invalidArgument, "blob \(id) has no byte \(offset)") }
        guard count > 0 else { return [] }
        let (http, bytes, what) = try await exchange(
            "GET", path(list, "blobs", id), headers: [("Range", "bytes=\(offset)-\(offset + count - 1)"), ("Accept", "application/octet-stream")])
        switch http.statusCode {
        case 206:
            guard http.value(forHTTPHeaderField: "Content-Range")?.hasPrefix("bytes \(offset)-") == true, bytes.count <= count else {
                throw SyncError.transport("\(what): the answer is not the range asked for")
            }
            return bytes
        case 200:
            // The whole blob: the range was all of it; otherwise a server (or a cache on the way)
            // that ignores ranges, which would send a large blob whole for every piece.
            guard offset == 0, bytes.count <= count else {
                throw SyncError.transport("\(what): the whole blob came for a range of it (does a proxy on the way drop the Range header?)")
            }
            return bytes
        case 416:
            // At or past the end: the answer gives the size.
            let size = http.value(forHTTPHeaderField: "Content-Range").flatMap { Int($0.drop { $0 != "/" }.dropFirst()) }
            if size == offset { return [] }
            throw StoreError(.invalidArgument, "blob \(id) has \(size.map(String.init) ?? "fewer") bytes: there is no byte \(offset)")
        default:
            throw Self.failure(status: http.statusCode, body: bytes, what: what)
        }
    }

    @discardableResult
    public func storeBlob<Bytes: AsyncSequence>(_ reference: BlobReference, to list: String, from bytes: Bytes, startingAt offset: Int) async throws
        -> BlobStatus where Bytes.Element == [UInt8]
    {
        #if canImport(Darwin)
        return try await storeBlobInParts(reference, to: list, from: bytes, startingAt: offset)
        #else
        if uploadsBlobsInParts { return try await storeBlobInParts(reference, to: list, from: bytes, startingAt: offset) }
        return try await streamBlob(reference, to: list, from: bytes, startingAt: offset)
        #endif
    }

    #if !canImport(Darwin)
    /// The rest of a blob, from `offset`, in one `PUT` whose body streams (`Content-Range` when it
    /// does not start at byte 0). Bytes that end early fail the request: the server keeps the
    /// whole parts that came, and the status it then gives is returned (see `storeBlob`).
    private func streamBlob<Bytes: AsyncSequence>(_ reference: BlobReference, to list: String, from bytes: Bytes, startingAt offset: Int)
        async throws -> BlobStatus where Bytes.Element == [UInt8]
    {
        let (target, size) = (path(list, "blobs", reference.id), reference.size)
        guard (0...size).contains(offset), offset < size || size == 0 else {
            return try await blob(reference.hash, of: list) ?? BlobStatus(hash: reference.hash, size: size, uploaded: 0, isStored: false)
        }
        // Where the upload stands first: a request that may be sent again, so a refused token is
        // asked for anew before the body goes (which cannot be sent twice).
        if let status = try await blob(reference.hash, of: list), status.isStored { return status }
        var (request, what) = try request("PUT", target, query: "", token: try await bearer(refresh: false))
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        if offset > 0 { request.setValue("bytes \(offset)-\(size - 1)/\(size)", forHTTPHeaderField: "Content-Range") }
        let counted = _CountedPieces(bytes: bytes, count: size - offset, what: reference.id)
        let (http, answer): (HTTPURLResponse, Data)
        do {
            (http, answer) = try await _NIOHTTPClient.upload(
                request, length: size - offset, pieces: counted, maxBytes: maxAnswerBytes, authorities: certificateAuthorities)
        } catch let failed as _NIOHTTPClient.PiecesFailed {
            guard failed.error is _CountedPieces<Bytes>.EndedEarly else { throw failed.error }
            // An upload in parts: the server keeps what came whole.
            return try await blob(reference.hash, of: list) ?? BlobStatus(hash: reference.hash, size: size, uploaded: 0, isStored: false)
        } catch {
            throw transferFailure(error, what: what, deadline: nil)
        }
        let body = [UInt8](answer)
        guard (200..<300).contains(http.statusCode) else { throw Self.failure(status: http.statusCode, body: body, what: what) }
        return try decode(body, WireDocument.decodeBlobStatus)
    }
    #endif

    /// The rest of a blob, from `offset`, in `PUT`s of 4 MiB parts with `Content-Range`, each
    /// answered with where the upload stands.
    private func storeBlobInParts<Bytes: AsyncSequence>(_ reference: BlobReference, to list: String, from bytes: Bytes, startingAt offset: Int)
        async throws -> BlobStatus where Bytes.Element == [UInt8]
    {
        let (target, size, pieceBytes) = (path(list, "blobs", reference.id), reference.size, Self.blobPieceBytes)
        // `buffer` holds the bytes from `start` that the server may not have yet; `skip`, how many
        // of those to come it has already.
        var (start, buffer, skip) = (offset, [UInt8](), 0)
        var status: BlobStatus?
        func put(_ piece: ArraySlice<UInt8>) async throws -> BlobStatus {
            let whole = start == 0 && piece.count == size
            let range = whole ? [] : [("Content-Range", "bytes \(start)-\(start + piece.count - 1)/\(size)")]
            let (http, answer, what) = try await exchange("PUT", target, body: Array(piece), bodyType: "application/octet-stream", headers: range)
            guard (200..<300).contains(http.statusCode) else { throw Self.failure(status: http.statusCode, body: answer, what: what) }
            let sent = try decode(answer, WireDocument.decodeBlobStatus)
            // What the server has now: the bytes before it leave the buffer.
            guard sent.isStored || sent.uploaded >= start else {
                throw SyncError.transport(
                    "PUT \(target): the server's upload of blob \(reference.id) went back to byte \(sent.uploaded) (another upload of it failed): upload it again",
                    transient: true)
            }
            let passed = sent.uploaded - start
            if passed <= buffer.count { buffer.removeFirst(passed) } else { (skip, buffer) = (passed - buffer.count, []) }
            start = sent.uploaded
            status = sent
            return sent
        }
        for try await piece in bytes {
            let passed = min(skip, piece.count)
            skip -= passed
            buffer += piece.dropFirst(passed)
            while buffer.count >= pieceBytes {
                if try await put(buffer[..<pieceBytes]).isStored { return status! }
            }
        }
        // The rest; or, for bytes that ended early, the whole parts among them.
        if !buffer.isEmpty || (start == 0 && size == 0) { return try await put(buffer[...]) }
        if let status { return status }
        return try await blob(reference.hash, of: list) ?? BlobStatus(hash: reference.hash, size: size, uploaded: 0, isStored: false)
    }
}

/// The pieces of `bytes` up to `count` bytes: more is not the blob's (`StoreError.invalidArgument`),
/// fewer ends the upload early (`EndedEarly`, which fails its request).
struct _CountedPieces<Bytes: AsyncSequence>: AsyncSequence where Bytes.Element == [UInt8] {
    typealias Element = [UInt8]
    struct EndedEarly: Error {}
    let bytes: Bytes
    let count: Int
    let what: String

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Bytes.AsyncIterator
        let count: Int
        let what: String
        var given = 0

        mutating func next() async throws -> [UInt8]? {
            guard let piece = try await base.next() else {
                if given < count { throw EndedEarly() }
                return nil
            }
            given += piece.count
            guard given <= count else {
                throw StoreError(.invalidArgument, "blob \(what) has fewer bytes than came: they are not its bytes, and nothing of them was kept")
            }
            return piece
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: bytes.makeAsyncIterator(), count: count, what: what) }
}
