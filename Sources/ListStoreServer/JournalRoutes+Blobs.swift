import HTTPTypes
import Hummingbird
import ListStoreCore
import ListStoreWire
import NIOCore

/// The blob endpoints of `JournalServer`: a list's attachments, uploaded and read a part at a time
/// (nothing holds a whole blob).
extension JournalRoutes {
    /// The route of a blob's bytes, whose `PUT` body is the bytes (of any media type: a browser
    /// asks before it sends a `PUT` across origins, see `JSONContentTypeMiddleware`).
    static let blobRoute = RouteTable.Route(.put, "v1/lists/:list/blobs/:blob")

    /// `PUT /v1/lists/{list}/blobs/{blob}`: uploads the blob's bytes to the list, hashing them as
    /// they stream; an upload that resumes, or goes in parts, sends `Content-Range`
    /// (RunningAServer.md, “The HTTP API”).
    func uploadBlob(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let (list, hash) = (try Self.list(context), try Self.blobHash(context))
        let length = try request.headers[.contentLength].map { text in
            guard let length = Int(text), length >= 0 else { throw APIError.invalidArgument("Content-Length is not a byte count") }
            return length
        }
        let (first, size): (Int, Int)
        if let header = request.headers[.contentRange] {
            guard let range = ByteRange.contentRange(header) else {
                throw APIError.invalidArgument("Content-Range must be 'bytes first-last/size', first ≤ last < size")
            }
            guard let length else {
                throw APIError(.lengthRequired, "lengthRequired", "an upload with Content-Range gives its Content-Length too")
            }
            guard length == range.last + 1 - range.first else {
                throw APIError.invalidArgument("Content-Length is not the length of the Content-Range")
            }
            (first, size) = (range.first, range.size)
        } else if let length {
            (first, size) = (0, length)
        } else {
            throw APIError(.lengthRequired, "lengthRequired", "a blob's upload gives its size: Content-Length, or Content-Range when it resumes")
        }
        let limit = min(configuration.maxBlobBytes, BlobReference.maxSize)
        guard size <= limit else { throw APIError(.contentTooLarge, "bodyTooLarge", "a blob may have at most \(limit) bytes, not \(size)") }
        let reference = BlobReference(hash: hash, size: size)
        let status: BlobStatus
        do {
            status = try await store.storeBlob(reference, to: list, from: request.body.map { Array(buffer: $0) }, startingAt: first)
        } catch let error as StoreError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            // The body ended early, or the client hung up: the parts written stay for a resumption.
            throw APIError(.badRequest, "bodyIncomplete", "the body ended before blob \(reference.id) was whole: the upload resumes where it stopped")
        }
        var response = Self.json(WireDocument.blobStatus(status, list: list))
        response.headers[.eTag] = Self.entityTag(of: hash)
        return response
    }

    /// `GET /v1/lists/{list}/blobs/{blob}/upload`: where the list stands with the blob, such as the
    /// byte an interrupted upload resumes at.
    func blobUpload(_ context: ServerRequestContext) async throws -> Response {
        let (list, hash) = (try Self.list(context), try Self.blobHash(context))
        guard let status = try await store.blob(hash, of: list) else { throw Self.blobNotFound(hash, of: list) }
        return Self.json(WireDocument.blobStatus(status, list: list))
    }

    /// `GET /v1/lists/{list}/blobs/{blob}`: the blob's bytes, streamed a part at a time, `private`
    /// (a shared cache would serve them without asking about the token). 404 `blobNotFound` also
    /// when the store lacks the bytes (a replica's blob whose bytes are at its source).
    func downloadBlob(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let (list, hash) = (try Self.list(context), try Self.blobHash(context))
        guard let status = try await store.blob(hash, of: list), status.isStored, let size = status.size else {
            throw Self.blobNotFound(hash, of: list)
        }
        let tag = Self.entityTag(of: hash)
        var headers: HTTPFields = [.eTag: tag, .cacheControl: "private, max-age=31536000, immutable", .acceptRanges: "bytes"]
        if Self.holds(request, tag) {
            return Response(status: .notModified, headers: headers)
        }
        var asked = ByteRange.asked(request.headers[.range], size: size)
        // A range asked of another representation than this one is a range of nothing here.
        if let condition = request.headers[.ifRange], condition != tag { asked = .whole }
        let bytes: Range<Int>
        switch asked {
        case .whole:
            bytes = 0..<size
        case .part(let range):
            bytes = range.lowerBound..<(range.upperBound + 1)
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
        case .unsatisfiable:
            var error = APIError(.rangeNotSatisfiable, "rangeNotSatisfiable", "blob \(BlobReference.id(of: hash)) has \(size) bytes: the range holds none")
            error.headers[.contentRange] = "bytes */\(size)"
            throw error
        }
        headers[.contentType] = "application/octet-stream"
        let store = store
        let body = ResponseBody(contentLength: bytes.count) { writer in
            // A part at a time: the writer waits while the client is slower than the store.
            for try await piece in _BlobPieces(range: bytes, read: { try await store.readBlob(hash, of: list, from: $0, maxBytes: $1) }) {
                try await writer.write(ByteBuffer(bytes: piece))
            }
            try await writer.finish(nil)
        }
        return Response(status: asked == .whole ? .ok : .partialContent, headers: headers, body: body)
    }

    /// The blob hash of the path (`sha256-` and 64 lowercase hexadecimal digits).
    static func blobHash(_ context: ServerRequestContext) throws -> ContentHash {
        guard let hash = BlobReference.hash(ofID: try parameter(context, "blob")) else {
            throw APIError.invalidArgument("the path's blob must be sha256- and 64 lowercase hexadecimal digits")
        }
        return hash
    }

    /// 404 `blobNotFound`: the list does not have blob `hash` (whether another list has it is
    /// nobody's business here).
    static func blobNotFound(_ hash: ContentHash, of list: String) -> APIError {
        APIError(.notFound, "blobNotFound", "list '\(list)' has no blob \(BlobReference.id(of: hash))")
    }

    /// The `ETag` of a blob's bytes: its id, quoted.
    static func entityTag(of hash: ContentHash) -> String { "\"\(BlobReference.id(of: hash))\"" }
}
