import Foundation
import HTTPTypes
import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import Testing

/// `GET /metrics`: the figures ListStoreServer's "Running a Server" lists ("Metrics"), in Prometheus's
/// text format.
@Suite struct MetricsTests {
    /// The value of the sample `name{labels}` (labels as written, sorted as the exporter writes
    /// them), or `nil` when the text has no such sample.
    static func sample(_ text: String, _ name: String) -> Double? {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, parts[0] == name { return Double(parts[1]) }
        }
        return nil
    }

    @Test(.timeLimit(.minutes(1))) func metricsShowRequestsLatenciesFollowersLagAndSize() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("m.liststore"))
        try await store.commit(linearList(3), to: "inbox")
        _ = try await store.registerConsumer("laptop", of: "inbox", at: 1)
        try await ServerHarness.with(store, token: "t") { server in

            // Without the token, nothing.
            #expect(try await server.request("/metrics").status == 401)

            let commit = #"{"schemaVersion":1,"sections":[{"id":"s","items":[{"id":"a","content":1}]}]}"#
            #expect(try await server.request("/v1/lists/inbox/commits", method: "POST", body: commit, token: "t").status == 200)
            #expect(try await server.request("/v1/lists/nope", token: "t").status == 404)
            #expect(try await server.request("/v2/nothing/here", token: "t").status == 404)
            // A long poll that waits while the metrics are read.
            let poll = Task { try await server.request("/v1/lists/inbox/journal?since=2&wait=30", token: "t").status }
            try await LimitTests.waitUntil { server.server.state.streams.current == 1 }

            let answer = try await server.request("/metrics", token: "t")
            #expect(answer.status == 200)
            #expect((answer.headers["Content-Type"] as? String)?.hasPrefix("text/plain; version=0.0.4") == true)
            let text = String(decoding: answer.body, as: UTF8.self)
            let commits = #"liststore_http_requests_total{method="POST",route="/v1/lists/{list}/commits",status="200"}"#
            #expect(Self.sample(text, commits) == 1, "\(text)")
            let missing = #"liststore_http_requests_total{method="GET",route="/v1/lists/{list}",status="404"}"#
            #expect(Self.sample(text, missing) == 1, "\(text)")
            // A request no route matched is labelled `unmatched`, as the metric's documentation says.
            let unmatched = #"liststore_http_requests_total{method="GET",route="unmatched",status="404"}"#
            #expect(Self.sample(text, unmatched) == 1, "\(text)")
            #expect(!text.contains("NotFound"), "\(text)")
            #expect(Self.sample(text, "liststore_commit_duration_seconds_count") == 1, "\(text)")
            #expect(Self.sample(text, "liststore_waiting_followers") == 1, "\(text)")
            #expect(Self.sample(text, #"liststore_list_head_version{list="inbox"}"#) == 2, "\(text)")
            #expect(Self.sample(text, #"liststore_journal_lag_versions{list="inbox"}"#) == 1, "\(text)")
            #expect((Self.sample(text, "liststore_store_size_bytes") ?? 0) > 4096, "\(text)")
            #expect(Self.sample(text, "liststore_lists") == 1, "\(text)")
            // No list name or token in the request counters' labels.
            #expect(!text.contains("route=\"/v1/lists/inbox"), "\(text)")

            // The long poll ends with the next commit, and is then counted.
            _ = try await store.commit(linearList(4), to: "inbox")
            #expect(try await poll.value == 200)
            // (A request is counted once its answer is written, just after the client has it: the
            // metrics are read until they count it.)
            let polls = #"liststore_http_requests_total{method="GET",route="/v1/lists/{list}/journal",status="200"}"#
            var after = ""
            try await waitUntil("the metrics count the long poll", every: .milliseconds(20)) {
                after = String(decoding: try await server.request("/metrics", token: "t").body, as: UTF8.self)
                return (Self.sample(after, polls) ?? 0) >= 1
            }
            #expect(Self.sample(after, polls) == 1, "\(after)")
            #expect(Self.sample(after, "liststore_waiting_followers") == 0, "\(after)")
            #expect(Self.sample(after, #"liststore_journal_lag_versions{list="inbox"}"#) == 2, "\(after)")
        }
    }

    /// The per-list gauges follow the first lists by name: a list pushed out of them loses its
    /// gauges rather than keeping its last values.
    @Test(.timeLimit(.minutes(1))) func perListGaugesFollowTheListsShown() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("m.liststore"))
        // The bound is the server's (200); five lists show the same rule at a fortieth of the cost.
        let shown = 5
        for k in 0..<shown {
            try await store.commit(linearList(1), to: "b\(1000 + k)")
        }
        try await ServerHarness.with(store) { server in
            server.server.metrics.maxListsShown = shown
            let last = "b\(1000 + shown - 1)"
            var text = String(decoding: try await server.request("/metrics").body, as: UTF8.self)
            #expect(Self.sample(text, #"liststore_list_head_version{list="\#(last)"}"#) == 1)
            try await store.commit(linearList(1), to: "a")
            text = String(decoding: try await server.request("/metrics").body, as: UTF8.self)
            #expect(Self.sample(text, #"liststore_list_head_version{list="a"}"#) == 1)
            #expect(!text.contains("list=\"\(last)\""), "\(text.suffix(2000))")
        }
    }

    /// Methods outside HTTP's own are one label, so clients cannot grow the metrics.
    @Test func unknownMethodsShareOneLabel() throws {
        typealias Middleware = RequestMetricsMiddleware<ServerRequestContext>
        #expect(Middleware.methodLabel(.get) == "GET")
        #expect(Middleware.methodLabel(.post) == "POST")
        #expect(Middleware.methodLabel(try #require(HTTPRequest.Method("BREW"))) == "other")
    }
}
