import Foundation
import ListJSON
import ListStore
import ListStoreCore
import ListDiffTestSupport
import ListStorePostgresTestSupport
import ListStoreTestSupport
import ListStoreWire
import Testing

@testable import ListStoreServer

/// `PUT` and `GET /v1/lists/{list}/blobs/{blob}`: a list's blobs over HTTP, on every engine.
@Suite struct BlobRouteTests {
    /// Bytes that look like nothing in particular.
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    static func path(_ list: String, _ reference: BlobReference) -> String { "/v1/lists/\(list)/blobs/\(reference.id)" }

    /// The head of a `PUT` of the whole blob `reference` to `list`, with `extra` header lines.
    static func putHead(_ list: String, _ reference: BlobReference, port: Int, extra: String = "") -> String {
        "PUT \(path(list, reference)) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/octet-stream\r\n"
            + "Content-Length: \(reference.size)\r\n\(extra)\r\n"
    }

    /// A header of an answer, whatever the case of its name.
    static func header(_ answer: (status: Int, body: [UInt8], headers: [AnyHashable: Any]), _ name: String) -> String? {
        answer.headers.first { ($0.key as? String)?.lowercased() == name.lowercased() }?.value as? String
    }

    @Test(arguments: EngineKind.available)
    func blobsGoUpAndComeBackWhole(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            try await stores[0].commit(linearList(1), to: "l", expectedVersion: nil, author: nil, message: nil)
            try await ServerHarness.with(stores[0]) { server in
                let partSize = _BlobParts.partSize
                for (k, size) in [0, 1, 1000, partSize - 1, partSize, partSize + 1, 2 * partSize + 77].enumerated() {
                    let bytes = Self.bytes(size, seed: UInt64(k))
                    let blob = BlobReference(of: bytes)
                    let put = try await server.request(Self.path("l", blob), method: "PUT", bytes: bytes, headers: ["Content-Type": "image/jpeg"])
                    #expect(put.status == 200, "\(size): \(String(decoding: put.body, as: UTF8.self))")
                    #expect(try WireDocument.decodeBlobStatus(put.body) == BlobStatus(hash: blob.hash, size: size, uploaded: size, isStored: true))
                    // Idempotent.
                    #expect(try await server.request(Self.path("l", blob), method: "PUT", bytes: bytes).status == 200)
                    let get = try await server.request(Self.path("l", blob))
                    #expect(get.status == 200 && get.body == bytes, "\(size): \(get.status)")
                    #expect(Self.header(get, "ETag") == "\"\(blob.id)\"")
                    #expect(Self.header(get, "Cache-Control") == "private, max-age=31536000, immutable")
                    #expect(Self.header(get, "Content-Type") == "application/octet-stream")
                    let again = try await server.request(Self.path("l", blob), headers: ["If-None-Match": "\"\(blob.id)\""])
                    #expect(again.status == 304 && again.body.isEmpty)
                    guard size > 2 else { continue }
                    let middle = try await server.request(Self.path("l", blob), headers: ["Range": "bytes=1-\(size - 2)"])
                    #expect(middle.status == 206 && middle.body == Array(bytes[1...(size - 2)]))
                    #expect(Self.header(middle, "Content-Range") == "bytes 1-\(size - 2)/\(size)")
                    let past = try await server.request(Self.path("l", blob), headers: ["Range": "bytes=\(size)-"])
                    #expect(past.status == 416 && Self.header(past, "Content-Range") == "bytes */\(size)")
                    // A range of another representation: the whole blob.
                    let other = try await server.request(Self.path("l", blob), headers: ["Range": "bytes=1-", "If-Range": "\"x\""])
                    #expect(other.status == 200 && other.body == bytes)
                }
            }
        }
    }

    /// Bytes that are not the blob's are refused whole: nothing of them is kept, and the list
    /// does not have the blob.
    @Test(arguments: EngineKind.available)
    func bytesThatAreNotTheBlobsAreRefusedAndNothingKept(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            try await stores[0].commit(linearList(1), to: "l", expectedVersion: nil, author: nil, message: nil)
            try await ServerHarness.with(stores[0]) { server in
                let bytes = Self.bytes(_BlobParts.partSize + 10, seed: 1)
                let blob = BlobReference(of: bytes)
                var wrong = bytes
                wrong[wrong.count - 1] ^= 1
                let refused = try await server.request(Self.path("l", blob), method: "PUT", bytes: wrong)
                #expect(refused.status == 400, "\(refused.status)")
                #expect(try await server.request(Self.path("l", blob) + "/upload").status == 404)
                #expect(try await server.request(Self.path("l", blob)).status == 404)
                #expect(try await stores[0].blob(blob.hash, of: "l") == nil)
                // A size that is not the blob's: refused too.
                let short = try await server.request(Self.path("l", blob), method: "PUT", bytes: Array(bytes.dropLast()))
                #expect(short.status == 400)
                #expect(try await stores[0].blob(blob.hash, of: "l") == nil)
                try await Self.expectVerifies(stores[0])
            }
        }
    }

    /// An upload whose client goes away keeps the parts that came whole; the upload resumes with
    /// `Content-Range` from the byte `GET …/upload` gives, and the bytes before it are passed over.
    @Test(arguments: EngineKind.available)
    func anUploadCutOffResumesWhereItStopped(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            try await stores[0].commit(linearList(1), to: "l", expectedVersion: nil, author: nil, message: nil)
            try await ServerHarness.with(stores[0]) { server in
                let partSize = _BlobParts.partSize
                // Text, to go through the raw connection as it is.
                let text = String((0..<(2 * partSize + 500)).map { _ in "abcdefghij".randomElement()! })
                let bytes = Array(text.utf8)
                let blob = BlobReference(of: bytes)
                let port = server.port
                let authorization = server.authorization
                try await RawConnection.run {
                    let connection = try RawConnection(port: port)
                    connection.send(
                        "PUT \(Self.path("l", blob)) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(authorization)Content-Type: application/octet-stream\r\n"
                            + "Content-Length: \(bytes.count)\r\n\r\n" + text.prefix(partSize + partSize / 2))
                    // The client goes away in the middle of the second part.
                }
                // The server keeps the first part, once it heard that the client went away.
                // (Until the server reads the request, the list does not upload the blob: 404.)
                func upload() async throws -> BlobStatus? {
                    let answer = try await server.request(Self.path("l", blob) + "/upload")
                    return answer.status == 404 ? nil : try WireDocument.decodeBlobStatus(answer.body)
                }
                try await waitUntil("the server kept the first part") { (try await upload()?.uploaded ?? 0) >= partSize }
                #expect(try await upload() == BlobStatus(hash: blob.hash, size: bytes.count, uploaded: partSize, isStored: false))
                #expect(try await server.request(Self.path("l", blob)).status == 404)
                // A resumption past what was sent is refused; one from before it passes over what came.
                let gap = try await server.request(
                    Self.path("l", blob), method: "PUT", bytes: Array(bytes[(partSize + 1)...]),
                    headers: ["Content-Range": "bytes \(partSize + 1)-\(bytes.count - 1)/\(bytes.count)"])
                #expect(gap.status == 400)
                let resumed = try await server.request(
                    Self.path("l", blob), method: "PUT", bytes: Array(bytes[100...]),
                    headers: ["Content-Range": "bytes 100-\(bytes.count - 1)/\(bytes.count)"])
                #expect(resumed.status == 200, "\(String(decoding: resumed.body, as: UTF8.self))")
                #expect(try await server.request(Self.path("l", blob)).body == bytes)
                try await Self.expectVerifies(stores[0])
            }
        }
    }

    /// An upload in parts: each `Content-Range` that ends before the blob's last byte keeps the
    /// whole parts it sent, and the answer says where the next starts.
    @Test(arguments: EngineKind.available)
    func anUploadGoesInParts(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            try await stores[0].commit(linearList(1), to: "l", expectedVersion: nil, author: nil, message: nil)
            try await ServerHarness.with(stores[0]) { server in
                let partSize = _BlobParts.partSize
                let bytes = Self.bytes(3 * partSize + 5, seed: 9)
                let blob = BlobReference(of: bytes)
                var next = 0
                // Pieces of 1.5 parts: each keeps what it completes of the parts, the rest is sent again.
                while true {
                    let end = min(bytes.count, next + partSize + partSize / 2)
                    let answer = try await server.request(
                        Self.path("l", blob), method: "PUT", bytes: Array(bytes[next..<end]),
                        headers: ["Content-Range": "bytes \(next)-\(end - 1)/\(bytes.count)"])
                    #expect(answer.status == 200)
                    let status = try WireDocument.decodeBlobStatus(answer.body)
                    if status.isStored { break }
                    #expect(status.uploaded == end - end % partSize)
                    next = status.uploaded
                }
                #expect(try await server.request(Self.path("l", blob)).body == bytes)
            }
        }
    }

    /// What each token may do with a list's blobs: read them with a read grant, upload them with a
    /// write grant; a list it may not read, or a blob its list does not have (though another list
    /// has it), is 404 as a list that does not exist.
    /// A client that sends `Expect: 100-continue` (curl, before a body over 1 MiB) gets `100
    /// Continue` before it sends the body, then the upload's answer.
    @Test func anUploadThatExpectsContinueGetsItBeforeItsBody() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(1), to: "l")
        try await ServerHarness.with(store) { server in
            let bytes = Self.bytes(2 << 20, seed: 100)
            let blob = BlobReference(of: bytes)
            let connection = try RawConnection(port: server.port)
            #expect(connection.send(Self.putHead("l", blob, port: server.port, extra: "Expect: 100-continue\r\n")))
            let interim = try await RawConnection.run { connection.receive(timeout: .seconds(30)) { $0.contains("\r\n\r\n") } }
            #expect(interim.text == "HTTP/1.1 100 Continue\r\n\r\n", "\(interim.text.prefix(300))")
            #expect(connection.send(bytes))
            let answer = try await RawConnection.run { connection.receive(timeout: .seconds(30)) { $0.contains("\"stored\":true") } }
            #expect(answer.text.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(answer.text.prefix(300))")
            #expect(try await store.blob(blob.hash, of: "l")?.isStored == true)
        }
    }

    /// An upload under way whose blob another upload to the same list gave up meanwhile (it went
    /// on from the same part with bytes that are not the blob's) is answered 409 `uploadGivenUp`:
    /// sent again, it lands.
    @Test func anUploadGivenUpByAnotherIsAConflictToSendAgain() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(1), to: "l")
        try await ServerHarness.with(store) { server in
            let part = 1 << 20
            let bytes = Self.bytes(3 * part + 5, seed: 101)
            let blob = BlobReference(of: bytes)
            let connection = try RawConnection(port: server.port)
            #expect(connection.send(Self.putHead("l", blob, port: server.port)))
            #expect(connection.send(Array(bytes[..<part])))
            try await waitUntil("the first part is written") { try await store.blob(blob.hash, of: "l")?.uploaded == part }
            var wrong = bytes
            wrong[part + 7] ^= 0xFF
            let other = try await server.request(Self.path("l", blob), method: "PUT", bytes: wrong)
            #expect(other.status == 400 && Self.code(other.body) == "invalidArgument")
            #expect(connection.send(Array(bytes[part...])))
            let answer = try await RawConnection.run { connection.receive(timeout: .seconds(30)) { $0.contains("schemaVersion") } }
            #expect(answer.text.hasPrefix("HTTP/1.1 409 Conflict\r\n") && answer.text.contains("\"uploadGivenUp\""), "\(answer.text.prefix(400))")
            let again = try await server.request(Self.path("l", blob), method: "PUT", bytes: bytes)
            #expect(again.status == 200)
            #expect(try await store.blob(blob.hash, of: "l")?.isStored == true)
        }
    }

    @Test func blobsAreReadAndWrittenThroughTheListsGrants() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        for list in ["users/ana/inbox", "users/bo/inbox", "teams/red/board"] { try await store.commit(linearList(1), to: list) }
        let bytes = Self.bytes(5000, seed: 3)
        let blob = BlobReference(of: bytes)
        try await store.storeBlob(blob, to: "users/bo/inbox", bytes: bytes)
        try await store.storeBlob(blob, to: "teams/red/board", bytes: bytes)
        try await ServerHarness.with(store, try await AccessServerTests.configuration()) { server in
            let ana = AccessServerTests.tokens.token(["sub": "ana", "teams": ["red"]])
            let (mine, bos, team) = ("users%2Fana%2Finbox", "users%2Fbo%2Finbox", "teams%2Fred%2Fboard")
            // Bo's list has it, and ana knows its hash: neither tells her anything.
            let other = try await server.request(Self.path(bos, blob), token: ana)
            #expect(other.status == 404 && Self.code(other.body) == "listNotFound")
            let notMine = try await server.request(Self.path(mine, blob), token: ana)
            #expect(notMine.status == 404 && Self.code(notMine.body) == "blobNotFound")
            #expect(try await server.request(Self.path(team, blob), token: ana).body == bytes)
            // Read, not write, on the team's list.
            let put = try await server.request(Self.path(team, blob), method: "PUT", bytes: bytes, token: ana)
            #expect(put.status == 403)
            let upload = try await server.request(Self.path(team, blob) + "/upload", token: ana)
            #expect(try WireDocument.decodeBlobStatus(upload.body).isStored)
            #expect(try await server.request(Self.path(bos, blob) + "/upload", token: ana).status == 404)
            #expect(try await server.request(Self.path(bos, blob), method: "PUT", bytes: bytes, token: ana).status == 404)
            #expect(try await server.request(Self.path(mine, blob), method: "PUT", bytes: bytes, token: ana).status == 200)
            #expect(try await server.request(Self.path(mine, blob), token: ana).body == bytes)
            #expect(try await server.request(Self.path(mine, blob), anonymous: true).status == 401)
        }
    }

    /// Requests that cannot be an upload are refused before any byte is kept.
    @Test func badUploadsAreRefused() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(1), to: "l")
        var configuration = JournalServer.Configuration(port: 0, keepAliveInterval: .seconds(1))
        configuration.maxBlobBytes = 100
        try await ServerHarness.with(store, configuration) { server in
            let bytes = Self.bytes(101, seed: 4)
            let blob = BlobReference(of: bytes)
            #expect(try await server.request(Self.path("l", blob), method: "PUT", bytes: bytes).status == 413)
            let small = BlobReference(of: Array(bytes.prefix(10)))
            for id in [small.id.uppercased(), "sha256-00", "md5-" + small.hash.hex] {
                #expect(try await server.request("/v1/lists/l/blobs/\(id)", method: "PUT", bytes: Array(bytes.prefix(10))).status == 400, "\(id)")
            }
            for range in ["bytes 0-5/10", "bytes 5-4/10", "bytes=0-9/10", "bytes */10", "bytes 0-9/x"] {
                let answer = try await server.request(
                    Self.path("l", small), method: "PUT", bytes: Array(bytes.prefix(10)), headers: ["Content-Range": range])
                #expect(answer.status == 400, "\(range)")
            }
            // No size: neither Content-Length nor Content-Range.
            let head = "PUT \(Self.path("l", small)) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nContent-Type: application/octet-stream\r\n"
                + "Transfer-Encoding: chunked\r\n"
            let chunked = try await RawAnswer.exchange(port: server.port, head, body: "a\r\n0123456789\r\n0\r\n\r\n")
            #expect(chunked.status == 411, "\(chunked.status) \(chunked.body)")
            let rangedChunks = try await RawAnswer.exchange(
                port: server.port, head + "Content-Range: bytes 0-9/10\r\n", body: "a\r\n0123456789\r\n0\r\n\r\n")
            #expect(rangedChunks.status == 411, "\(rangedChunks.status) \(rangedChunks.body)")
            #expect(try await store.blob(small.hash, of: "l") == nil)
            #expect(try await server.request(Self.path("nope", small), method: "PUT", bytes: Array(bytes.prefix(10))).status == 404)
        }
    }

    /// The error code of an error document.
    static func code(_ body: [UInt8]) -> String? {
        (try? JSONValue(parsing: body))?["error"]?["code"]?.stringValue
    }

    static func expectVerifies(_ store: any ListStoreEngine) async throws {
        let report = try await store.verify(list: nil, progress: nil)
        #expect(report.isValid, "\(report)")
    }
}
