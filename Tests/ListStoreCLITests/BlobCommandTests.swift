import Foundation
import ListDiffTestSupport
import ListJSON
import ListStore
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `liststore blob put|get` as a user runs them: a phone attaches a photo offline, its push uploads
/// the photo before the change, and a tablet fetches the photo from the server when it shows it.
@Suite(.blockingWaits) struct BlobCommandTests {
    @Test func aPhotoPutOfflineIsPushedAndFetchedByAnotherReplica() throws {
        let f = try OfflineCommandTests.Fixture()
        var random = SplitMix64(seed: 7)
        let jpeg = (0..<(2 * 1_048_576 + 321)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let photo = try f.dir.file("IMG_1.jpg", jpeg)
        let (server, url) = try ServeCommandTests.serve(f.source)
        defer {
            server.send(SIGTERM)
            _ = server.waitForExit(timeout: .seconds(20))
        }
        let (phone, tablet) = (f.path("phone.liststore"), f.path("tablet.liststore"))
        for replica in [phone, tablet] {
            #expect(try CLIRunner.run(["pull", "--from", url, "--list", "inbox", "--replica", replica]).status == 0)
        }

        // Offline: the phone stores the photo and an element refers to it.
        let put = try CLIRunner.run(["blob", "put", "--db", phone, "--list", "inbox", "--type", "image/jpeg", photo])
        #expect(put.status == 0 && put.stderr.isEmpty, "\(put.stderr)")
        let reference = try JSONValue(parsing: Array(put.stdout.utf8))
        let id = try #require(reference["$blob"]?.stringValue)
        #expect(reference == BlobReference(of: jpeg, type: "image/jpeg", name: "IMG_1.jpg").json)
        #expect(put.stdout.hasSuffix("}\n") && put.stdout.filter { $0 == "\n" }.count == 1)
        // Again: the same reference, nothing changed.
        #expect(try CLIRunner.run(["blob", "put", "--db", phone, "--list", "inbox", "--type", "image/jpeg", photo]).stdout == put.stdout)
        let document = #"{"sections":[{"id":"s","elements":[{"id":"a","content":{"t":"a"}},{"id":"p","content":{"photo":"# + put.stdout.dropLast()
            + "}}]}]}"
        let commit = try CLIRunner.run(["commit", "--db", phone, "--list", "inbox", "--file", try f.dir.file("with-photo.json", document)])
        #expect(commit.status == 0, "\(commit.stderr)")

        // Online: the push sends the photo first.
        let push = try CLIRunner.run(["push", "--from", url, "--list", "inbox", "--replica", phone])
        #expect(push.status == 0, "\(push.stderr)")

        // The tablet has the element; the photo's bytes are the server's until it fetches them.
        #expect(try CLIRunner.run(["pull", "--from", url, "--list", "inbox", "--replica", tablet]).status == 0)
        let out = f.path("shown.jpg")
        let local = try CLIRunner.run(["blob", "get", "--db", tablet, "--list", "inbox", id, "--out", out])
        #expect(local.status == 65 && local.stderr.contains("--from"), "\(local.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        let fetched = try CLIRunner.run(["blob", "get", "--db", tablet, "--list", "inbox", id, "--out", out, "--from", url])
        #expect(fetched.status == 0 && fetched.stderr.isEmpty, "\(fetched.stderr)")
        #expect(FileManager.default.contents(atPath: out).map { [UInt8]($0) } == jpeg)
        // Trimmed to a budget of 0, the tablet drops the photo's bytes (its source has them), and
        // fetches them again.
        let trim = try CLIRunner.run(["blob", "trim", "--db", tablet, "--list", "inbox", "--max-mib", "0", "--json"])
        #expect(trim.status == 0, "\(trim.stderr)")
        let trimmed = try JSONValue(parsing: Array(trim.stdout.utf8))
        #expect(trimmed["droppedBlobs"] == 1 && trimmed["droppedBytes"] == JSONValue(jpeg.count) && trimmed["heldBytes"] == 0, "\(trim.stdout)")
        #expect(try CLIRunner.run(["blob", "get", "--db", tablet, "--list", "inbox", id, "--out", out]).status == 65)
        #expect(try CLIRunner.run(["blob", "get", "--db", tablet, "--list", "inbox", id, "--out", out, "--from", url]).status == 0)
        // The phone's photo stays while its change waits for a pull to confirm it; then it is a
        // copy of the source's, which a trim drops. A photo stored for a change still to come stays.
        let next = try CLIRunner.run(["blob", "put", "--db", phone, "--list", "inbox", try f.dir.file("next.txt", "the next photo")])
        let nextID = try #require(try JSONValue(parsing: Array(next.stdout.utf8))["$blob"]?.stringValue)
        let pending = try CLIRunner.run(["blob", "trim", "--db", phone, "--list", "inbox", "--max-mib", "0"])
        #expect(pending.stdout == "'inbox': 0 blobs dropped (0 bytes); \(jpeg.count) bytes of blobs held.\n", "\(pending.stdout) \(pending.stderr)")
        #expect(try CLIRunner.run(["pull", "--from", url, "--list", "inbox", "--replica", phone]).status == 0)
        let confirmed = try CLIRunner.run(["blob", "trim", "--db", phone, "--list", "inbox", "--max-mib", "0"])
        #expect(confirmed.stdout == "'inbox': 1 blob dropped (\(jpeg.count) bytes); 0 bytes of blobs held.\n", "\(confirmed.stdout) \(confirmed.stderr)")
        #expect(try CLIRunner.run(["blob", "get", "--db", phone, "--list", "inbox", id, "--out", f.path("gone.jpg")]).status == 65)
        #expect(try CLIRunner.run(["blob", "get", "--db", phone, "--list", "inbox", nextID]).stdout == "the next photo")
        // Held now: no server needed.
        server.send(SIGTERM)
        #expect(server.waitForExit(timeout: .seconds(20)))
        let again = try CLIRunner.run(["blob", "get", "--db", tablet, "--list", "inbox", id, "--out", out])
        #expect(again.status == 0)
        #expect(FileManager.default.contents(atPath: out).map { [UInt8]($0) } == jpeg)
        for store in [f.source, phone, tablet] {
            #expect(try CLIRunner.run(["verify", "--db", store]).status == 0, "\(store)")
        }
    }

    @Test func blobsOfTextGoToStdoutAndBadInputIsOneLine() throws {
        let f = try OfflineCommandTests.Fixture()
        let text = try f.dir.file("note.txt", "a note\n")
        let put = try CLIRunner.run(["blob", "put", "--db", f.source, "--list", "inbox", "--name", "Note", text])
        #expect(put.status == 0)
        let id = try #require(try JSONValue(parsing: Array(put.stdout.utf8))["$blob"]?.stringValue)
        #expect(try JSONValue(parsing: Array(put.stdout.utf8))["name"] == "Note")
        let get = try CLIRunner.run(["blob", "get", "--db", f.source, "--list", "inbox", id])
        #expect(get.status == 0 && get.stdout == "a note\n")

        func refused(_ arguments: [String], _ status: Int32, _ words: String) throws {
            let result = try CLIRunner.run(arguments)
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(words) && result.stderr.filter { $0 == "\n" }.count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        try refused(["blob", "put", "--db", f.source, "--list", "inbox", f.path("none.jpg")], 66, "none.jpg")
        try refused(["blob", "put", "--db", f.source, "--list", "nope", text], 65, "nope")
        try refused(["blob", "get", "--db", f.source, "--list", "inbox", id.uppercased()], 64, "sha256-")
        try refused(["blob", "get", "--db", f.source, "--list", "inbox", "sha256-" + String(repeating: "0", count: 64)], 65, "has no blob")
        let none = "sha256-" + String(repeating: "0", count: 64)
        try refused(["blob", "get", "--db", f.source, "--list", "inbox", none, "--from", "http://127.0.0.1:1"], 65, "not a replica")
        try refused(["blob", "trim", "--db", f.source, "--list", "inbox", "--max-mib", "0"], 65, "follows no source")
        try refused(["blob", "trim", "--db", f.source, "--list", "inbox", "--max-mib", "-1"], 64, "--max-mib")
        try refused(["blob", "trim", "--db", f.source, "--list", "nope", "--max-mib", "0"], 65, "nope")
        #expect(try CLIRunner.run(["verify", "--db", f.source]).status == 0)
    }
}
