import Hummingbird
import ListStore
import ListSync
import Logging

/// An error answered to a client: a status and the JSON error document
/// `{"error":{"code":…,"message":…},"schemaVersion":1}`. Store errors keep their code; anything
/// unexpected is logged and answered as `internal` without details.
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

    /// `error` as the client sees it.
    static func from(_ error: any Error, logger: Logger) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as StoreError:
            var api = APIError(status(of: error.code), error.code.description, error.message)
            api.expectedVersion = error.expectedVersion
            api.currentVersion = error.currentVersion
            if api.status == .internalServerError {
                logger.error("store error: \(error.message)")
            }
            return api
        case let error as HTTPError:
            return APIError(error.status, error.status == .contentTooLarge ? "bodyTooLarge" : "http", error.body ?? error.status.reasonPhrase)
        default:
            logger.error("unexpected error: \(String(describing: error))")
            return APIError(.internalServerError, "internal", "the server failed to answer this request")
        }
    }

    static func status(of code: StoreError.Code) -> HTTPResponse.Status {
        switch code {
        case .listNotFound, .versionNotFound: .notFound
        case .versionConflict: .conflict
        case .invalidSnapshot, .invalidListName, .invalidEdit, .invalidArgument: .badRequest
        default: .internalServerError
        }
    }

    var response: Response {
        var headers = self.headers
        headers[.contentType] = "application/json"
        let body = SyncDocument.error(
            code: code, message: message, expectedVersion: expectedVersion, currentVersion: currentVersion)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}

/// Answers every error of the routes below it with a JSON error document, and unknown paths with a
/// 404 one.
struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            if let http = error as? HTTPError, http.status == .notFound {
                return APIError(.notFound, "notFound", "no such endpoint: \(request.method) \(request.uri.path)").response
            }
            return APIError.from(error, logger: context.logger).response
        }
    }
}
