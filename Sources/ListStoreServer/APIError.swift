import Hummingbird
import ListStoreCore
import ListStoreWire
import Logging

/// An error answered to a client: a status and the JSON error document
/// `{"error":{"code":…,"message":…},"schemaVersion":1}`. Store errors keep their code, except those
/// of a failing server (a damaged store, I/O): those and anything unexpected are logged and
/// answered 500 `internal` without details.
struct APIError: Error {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    var expectedVersion: Int?
    var currentVersion: Int?
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// A bad query or path parameter.
    static func invalidArgument(_ message: String) -> APIError {
        APIError(.badRequest, StoreError.Code.invalidArgument.description, message)
    }

    /// The code of a 400 answer to a body that is not a push document.
    static let invalidPushCode = "invalidPush"

    /// The code of a 503 answer: the server is at one of its limits.
    static let serverBusyCode = "serverBusy"
    /// The `Retry-After` of a 503 answer, in seconds.
    static let retryAfterSeconds = 5
    /// The `Retry-After` of a 503 answer for a store that cannot be reached now (`unavailable`,
    /// `outcomeUnknown`), in seconds: a database's restart or failover takes seconds.
    static let storeRetryAfterSeconds = 2

    /// 503 with `Retry-After`: the server is at one of its limits.
    static func serverBusy(_ message: String) -> APIError {
        var error = APIError(.serviceUnavailable, serverBusyCode, message)
        error.headers[.retryAfter] = String(retryAfterSeconds)
        return error
    }

    /// 503: every place for a long poll or an event stream is taken. A cache may keep it a second,
    /// so that the long polls waiting behind it get it too rather than each asking the server.
    static let noPlaceToWait: APIError = {
        var error = serverBusy("the server holds as many long polls and event streams as it may; try again later")
        error.headers[.accelExpires] = "1"
        return error
    }()

    /// The answer to a failure of the server itself (500): no details, which go to the log.
    static let `internal` = APIError(.internalServerError, "internal", "the server failed to answer this request")

    /// `error` as the client sees it; the store's location is kept out of its message.
    static func from(_ error: any Error, logger: Logger, storeLocation: String) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as StoreError:
            let status = Self.status(of: error.code)
            // The operator's to fix: logged with what and where, the client told only what it may know.
            if status == .internalServerError || error.code == .storageFull { logger.error("store error (\(error.code)): \(error.message)") }
            guard status != .internalServerError else { return .internal }
            var api = APIError(status, error.code.description, redacted(error.message, storeLocation))
            api.expectedVersion = error.expectedVersion
            api.currentVersion = error.currentVersion
            if api.status == .serviceUnavailable { api.headers[.retryAfter] = String(storeRetryAfterSeconds) }
            return api
        case let error as HTTPError where error.status != .internalServerError:
            return APIError(error.status, error.status == .contentTooLarge ? "bodyTooLarge" : "http", error.body ?? error.status.reasonPhrase)
        default:
            logger.error("unexpected error: \(String(describing: error))")
            return .internal
        }
    }

    /// `message` with the store's location (a file path, or a PostgreSQL URL without its password)
    /// written as "the store": clients learn nothing of the server's files or database.
    static func redacted(_ message: String, _ location: String) -> String {
        guard !location.isEmpty else { return message }
        return message.replacingOccurrences(of: "the store at " + location, with: "the store").replacingOccurrences(of: location, with: "the store")
    }

    static func status(of code: StoreError.Code) -> HTTPResponse.Status {
        switch code {
        case .listNotFound, .versionNotFound: .notFound
        case .cursorExpired, .cursorOfAnotherHistory: .gone
        case .versionConflict, .pushOutOfOrder, .pushMismatch, .pendingChanges, .missingBlob, .uploadGivenUp: .conflict
        case .invalidSnapshot, .invalidListName, .invalidEdit, .invalidArgument: .badRequest
        // The store could not be reached, or lost a commit's answer: the body's code says which.
        case .unavailable, .outcomeUnknown: .serviceUnavailable
        case .storageFull: .insufficientStorage
        default: .internalServerError
        }
    }

    var response: Response {
        var headers = self.headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The answer's JSON body: `{"error":{"code":…,"message":…}}`, with the versions of a conflict.
    var body: [UInt8] {
        WireDocument.error(code: code, message: message, expectedVersion: expectedVersion, currentVersion: currentVersion)
    }
}

extension APIError {
    /// 404 `notFound`: no route answers `method` and `path`.
    static func noSuchEndpoint(_ method: HTTPRequest.Method, _ path: String) -> APIError {
        APIError(.notFound, "notFound", "no such endpoint: \(method) \(path)")
    }
}

/// Answers every error of the routes below it with a JSON error document, and unknown paths with a
/// 404 one.
struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The store's location, kept out of error messages.
    let storeLocation: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as CancellationError {
            // Its client hung up: nobody to answer, and no failure to log (counted as 499).
            throw error
        } catch {
            if let http = error as? HTTPError, http.status == .notFound {
                return APIError.noSuchEndpoint(request.method, request.uri.path).response
            }
            return APIError.from(error, logger: context.logger, storeLocation: storeLocation).response
        }
    }
}

extension HTTPResponse.Status {
    /// 507: the store has no room for the write (`storageFull`); nothing was changed.
    static let insufficientStorage = HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage")
}
