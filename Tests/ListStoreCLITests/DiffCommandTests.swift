import Foundation
import ListJSON
import ListDiffTestSupport
import Testing

/// `liststore diff` run as a user runs it: the built binary, its stdout, stderr and exit code.
@Suite(.blockingWaits) struct DiffCommandTests {
    let before = #"{"sections":[{"id":"today","content":{"title":"Today"},"elements":[{"id":"m1","content":{"text":"hi"}},{"id":"m2"},{"id":"m3","content":18446744073709551615}]},{"id":"old","elements":[{"id":"m4"}]}]}"#
    let after = #"{"sections":[{"id":"new","content":null,"elements":[{"id":"m4"}]},{"id":"today","content":{"title":"Today!"},"elements":[{"id":"m3","content":18446744073709551615},{"id":"m1","content":{"text":"hi there"}},{"id":"m5","content":0.1000000000000000055511151231257827}]}],"ignored":true}"#

    @Test func jsonOutputIsOneVersionedDocumentThatReplaysToTheTarget() throws {
        let dir = try TemporaryDirectory()
        let from = try dir.file("a.json", before)
        let to = try dir.file("b.json", after)
        let result = try CLIRunner.run(["diff", "--from", from, "--to", to, "--json"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        let document = try JSONValue(parsing: result.stdout)
        guard case .object(let object) = document else {
            Issue.record("not an object: \(result.stdout)")
            return
        }
        #expect(object["schemaVersion"] == .number(JSONNumber(1)))
        #expect(object.keys == ["schemaVersion", "stages"])
        let source = try SnapshotDocument(decoding: JSONValue(parsing: before)).sections
        let target = try SnapshotDocument(decoding: JSONValue(parsing: after)).sections
        let replayed = try StageDocument.decodeStages(try #require(object["stages"]), applyingTo: source)
        #expect(replayed.result == target)
        #expect(replayed.changeset.count == 3)
        // Exact numbers survive the trip.
        #expect(result.stdout.contains("0.1000000000000000055511151231257827"))
    }

    @Test func summaryNamesEveryStageAndOperation() throws {
        let dir = try TemporaryDirectory()
        let result = try CLIRunner.run(["diff", "--from", try dir.file("a.json", before), "--to", try dir.file("b.json", after)])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        #expect(result.stdout.hasPrefix("3 stages, "))
        #expect(result.stdout.contains("Stage 1 of 3: 1 section deleted, 1 section inserted, 1 element deleted, 1 element inserted, 1 element moved"))
        #expect(result.stdout.contains(#"delete section  1"#))
        #expect(result.stdout.contains(#""new" with 1 element"#))
        #expect(result.stdout.contains(#"update section  1  "today"  {"title":"Today!"}"#))
        #expect(result.stdout.contains(#"update element  [1, 1]  "m1"  {"text":"hi there"}"#))
    }

    @Test func equalSnapshotsSayNoChanges() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.file("a.json", before)
        let result = try CLIRunner.run(["diff", "--from", path, "--to", path])
        #expect(result.status == 0)
        #expect(result.stdout == "No changes: the snapshots are equal.\n")
        let json = try CLIRunner.run(["diff", "--from", path, "--to", path, "--json"])
        #expect(json.stdout == #"{"schemaVersion":1,"stages":[]}"# + "\n")
    }

    @Test func standardInputCanBeEitherSide() throws {
        let dir = try TemporaryDirectory()
        let result = try CLIRunner.run(["diff", "--from", "-", "--to", try dir.file("b.json", after), "--json"],
                                       input: Data(before.utf8))
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix(#"{"schemaVersion":1,"stages":[{"#))
    }

    /// Every kind of bad input: one line on stderr, the documented code, nothing on stdout.
    @Test(arguments: [
        ("not JSON", Array("{\"sections\": [".utf8), 65, "invalid JSON"),
        ("not UTF-8", [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D], 65, "UTF-8"),
        ("UTF-16 file", [0xFF, 0xFE, 0x7B, 0x00, 0x7D, 0x00], 65, "invalid UTF-8"),
        ("wrong type", Array(#"{"sections": {"id": "a"}}"#.utf8), 65, "sections"),
        ("missing id", Array(#"{"sections": [{"elements": []}]}"#.utf8), 65, "sections[0].id"),
        ("number id", Array(#"{"sections": [{"id": "s", "elements": [{"id": 7}]}]}"#.utf8), 65, "sections[0].elements[0].id"),
        ("absurd nesting", Array(String(repeating: "[", count: 100_000).utf8), 65, "nested"),
        ("top level array", Array("[]".utf8), 65, "top level"),
        ("empty file", [], 65, "invalid JSON"),
    ] as [(String, [UInt8], Int32, String)])
    func badInputIsOneLineAndExit65(name: String, bytes: [UInt8], status: Int32, mention: String) throws {
        let dir = try TemporaryDirectory()
        let good = try dir.file("good.json", before)
        let bad = try dir.file("bad.json", bytes)
        let result = try CLIRunner.run(["diff", "--from", good, "--to", bad])
        #expect(result.status == status, "\(name)")
        #expect(result.stdout.isEmpty, "\(name)")
        #expect(result.stderr.hasPrefix("liststore: error: "), "\(name)")
        #expect(result.stderr.filter { $0 == "\n" }.count == 1, "\(name): \(result.stderr)")
        #expect(result.stderr.contains(mention), "\(name): \(result.stderr)")
    }

    @Test func missingFileAndDirectoryExit66() throws {
        let dir = try TemporaryDirectory()
        let good = try dir.file("good.json", before)
        let missing = try CLIRunner.run(["diff", "--from", good, "--to", dir.url.appendingPathComponent("nope.json").path])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("no such file"))
        let directory = try CLIRunner.run(["diff", "--from", dir.url.path, "--to", good])
        #expect(directory.status == 66)
        #expect(directory.stderr.contains("directory"))
    }

    @Test func usageErrorsExit64WithOneLine() throws {
        for arguments in [["diff", "--from", "a.json"], ["diff", "--from", "a", "--to", "b", "--bogus"], ["frobnicate"]] {
            let result = try CLIRunner.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.filter { $0 == "\n" }.count == 1, "\(arguments): \(result.stderr)")
        }
    }

    @Test func helpListsExitCodes() throws {
        let result = try CLIRunner.run(["diff", "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("65 invalid input data"))
    }
}
