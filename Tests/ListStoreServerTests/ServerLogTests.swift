import Foundation
import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import Logging
import Testing

/// What the server writes to the logger it is given.
@Suite struct ServerLogTests {
    /// A log handler that records what it is asked to write and how often its metadata is set.
    final class Recorder: @unchecked Sendable {
        // Safe: every property is reached under `lock`.
        private let lock = NSLock()
        private var _events: [LogEvent] = []
        private var _metadataSets = 0

        var events: [LogEvent] { lock.withLock { _events } }
        var metadataSets: Int { lock.withLock { _metadataSets } }
        func record(_ event: LogEvent) { lock.withLock { _events.append(event) } }
        func countMetadataSet() { lock.withLock { _metadataSets += 1 } }
    }

    struct RecordingHandler: LogHandler {
        let recorder: Recorder
        var metadataProvider: Logger.MetadataProvider?
        var metadata: Logger.Metadata = [:] { didSet { recorder.countMetadataSet() } }
        var logLevel: Logger.Level = .info

        init(recorder: Recorder, metadataProvider: Logger.MetadataProvider? = nil) {
            self.recorder = recorder
            self.metadataProvider = metadataProvider
        }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        /// Merges as swift-log's handlers do: the handler's metadata, the provider's, the event's.
        func log(event: LogEvent) {
            var event = event
            var all = metadata
            all.merge(metadataProvider?.get() ?? [:]) { _, provided in provided }
            all.merge(event.metadata ?? [:]) { _, own in own }
            event.metadata = all
            recorder.record(event)
        }
    }

    @Test(.timeLimit(.minutes(1))) func requestsAreLoggedWithTheirIdAndTheLoggersMetadataWithoutSettingItPerRequest() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("log.liststore"))
        try await store.commit(linearList(3, content: 1), to: "l")
        let recorder = Recorder()
        var logger = Logger(label: "test.server") { _ in RecordingHandler(recorder: recorder) }
        logger[metadataKey: "instance"] = "a"
        let setsBefore = recorder.metadataSets
        let server = try await ServerHarness.start(store, .init(port: 0), logger: logger)
        for _ in 0..<3 {
            let answer = try await server.request("/v1/store")
            #expect(answer.status == 200, "\(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
        }
        await server.stop()

        let requests = recorder.events.filter { $0.level == .info && $0.metadata?["hb.request.id"] != nil }
        #expect(requests.count >= 3, "\(recorder.events.map(\.message))")
        #expect(Set(requests.compactMap { $0.metadata?["hb.request.id"]?.description }).count == requests.count)
        #expect(requests.allSatisfy { $0.metadata?["instance"]?.description == "a" })
        // The handler given may format its metadata whenever it is set (StreamLogHandler does): the
        // server takes it over once, and hands it over with what is written, never per request.
        #expect(recorder.metadataSets - setsBefore <= 1, "metadata set \(recorder.metadataSets - setsBefore) times")
    }

    /// Request logs carry no header, so never the token: not for a request that has it right, one
    /// that has it wrong, or one that fails.
    @Test(.timeLimit(.minutes(1))) func requestLogsKeepTheTokenOut() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("log.liststore"))
        try await store.commit(linearList(3), to: "l")
        let recorder = Recorder()
        var logger = Logger(label: "test.server") { _ in RecordingHandler(recorder: recorder) }
        logger.logLevel = .trace
        let token = "t0ken-\(UInt64.random(in: 1...UInt64.max))"
        let server = try await ServerHarness.start(store, .init(port: 0, token: token), logger: logger)
        #expect(try await server.request("/v1/lists/l", token: token).status == 200)
        #expect(try await server.request("/v1/lists/nope", token: token).status == 404)
        #expect(try await server.request("/v1/lists/l", token: token + "x").status == 401)
        #expect(try await server.request("/metrics", token: token).status == 200)
        await server.stop()
        let events = recorder.events
        #expect(events.count >= 4)
        for event in events {
            let text = "\(event.message) \(event.metadata ?? [:])"
            #expect(!text.contains(token), "\(text)")
        }
    }

    @Test func theWrappedLoggerKeepsSwiftLogsMetadataOrderAndLevel() throws {
        let recorder = Recorder()
        let provider = Logger.MetadataProvider { ["k": "provided", "p": "provided"] }
        var given = Logger(label: "test") { _ in RecordingHandler(recorder: recorder, metadataProvider: provider) }
        given[metadataKey: "k"] = "logger"
        given[metadataKey: "l"] = "logger"
        given.logLevel = .notice
        var logger = given.deferringMetadata
        logger[metadataKey: "r"] = "request"
        logger.info("filtered out")
        logger.notice("written", metadata: ["l": "call"])
        let events = recorder.events
        #expect(events.map(\.message.description) == ["written"])
        let metadata = events.first?.metadata ?? [:]
        #expect(metadata["k"]?.description == "provided")  // the provider's over the logger's
        #expect(metadata["p"]?.description == "provided")
        #expect(metadata["l"]?.description == "call")  // the call's over the logger's
        #expect(metadata["r"]?.description == "request")
    }
}
