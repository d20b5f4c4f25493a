import Foundation
import ListJSON
import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import Testing

/// The API's OpenAPI document: served as kept in the repository, and naming only endpoints the
/// server has. (`Tools/api-contract/run` checks the answers against it with schemathesis.)
@Suite struct OpenAPIDocumentTests {
    @Test(.timeLimit(.minutes(1))) func theDocumentIsServedWithoutATokenAndEveryOperationInItIsRouted() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("o.liststore"))
        try await store.commit(linearList(3), to: "l")
        try await ServerHarness.with(store, token: "t") { server in

            let served = try await server.request("/v1/openapi.json")
            #expect(served.status == 200)
            #expect(served.body == PackageResources.openapi_json)
            let document = try JSONValue(parsing: served.body)
            #expect(document["openapi"]?.stringValue?.hasPrefix("3.1.") == true)
            guard case .object(let paths)? = document["paths"] else {
                Issue.record("the document has no paths")
                return
            }
            #expect(paths.count >= 13)
            let versionBefore = try await store.summary(of: "l").version
            for (path, item) in paths {
                guard case .object(let operations) = item else { continue }
                // A list that does not exist: every operation is routed, and none changes anything.
                let concrete = path.replacingOccurrences(of: "{list}", with: "nope").replacingOccurrences(of: "{client}", with: "c")
                    .replacingOccurrences(of: "{name}", with: "n").replacingOccurrences(of: "{blob}", with: "sha256-" + String(repeating: "0", count: 64))
                for (method, _) in operations where ["get", "put", "post", "delete", "patch"].contains(method) {
                    let answer = try await server.request(
                        concrete, method: method.uppercased(), body: method == "get" ? nil : "{}", token: "t")
                    let code = (try? JSONValue(parsing: answer.body))?["error"]?["code"]?.stringValue
                    #expect(code != "notFound" && answer.status != 405, "\(method) \(path): \(answer.status) \(code ?? "")")
                }
            }
            #expect(try await store.summary(of: "l").version == versionBefore)
            #expect(try await store.lists().map(\.name) == ["l"])
        }
    }

    /// The methods the access endpoint takes in `X-Original-Method` are the document's enum of them,
    /// in its order: the middleware's list and the document say them once each, and this holds them
    /// together.
    @Test func theAccessEndpointTakesTheMethodsTheDocumentNames() throws {
        let document = try JSONValue(parsing: PackageResources.openapi_json)
        let parameters = document["paths"]?["/v1/access"]?["get"]?["parameters"]?.arrayValue ?? []
        let method = try #require(parameters.first { $0["name"]?.stringValue == "X-Original-Method" })
        let named = method["schema"]?["enum"]?.arrayValue?.compactMap(\.stringValue)
        #expect(named == AccessMiddleware.askableMethods)
    }
}

