import Foundation
import ListJSON
import ListStore
import ListDiffTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The reliability promises with real processes: kill -9 in the middle of commits, and several
/// writers and readers on one file at once.
@Suite(.serialized, .blockingWaits) struct ProcessSafetyTests {
    /// A snapshot document of `count` elements whose ids start with `prefix`, spread over 4 sections.
    private func document(_ prefix: String, count: Int, salt: Int) -> String {
        let sections = (0..<4).map { s in
            let elements = (0..<count / 4).map { e in
                #"{"id":"\#(prefix)\#(s)-\#(e)","content":{"n":\#(e &* salt),"text":"element \#(e) of \#(prefix)"}}"#
            }
            return #"{"id":"s\#(s)","content":\#(s + salt),"elements":[\#(elements.joined(separator: ","))]}"#
        }
        return #"{"sections":[\#(sections.joined(separator: ","))]}"#
    }

    @Test func killedCommitsLeaveTheOldOrTheNewVersion() throws {
        let dir = try TemporaryDirectory()
        let db = dir.url.appendingPathComponent("kill.liststore").path
        // Two very different snapshots, so that each commit rewrites thousands of rows.
        let texts = [document("a", count: 8000, salt: 1), document("b", count: 8000, salt: 2), document("a", count: 6000, salt: 3)]
        let files = try texts.enumerated().map { try dir.file("snapshot\($0.offset).json", $0.element) }
        let digests = try texts.map {
            ListDigest.of(try SnapshotDocument.sections(decoding: JSONValue(parsing: $0)) as [ListSection])
        }
        // A first commit that completes, to have a store.
        #expect(try CLIRunner.run(["commit", "--db", db, "--list", "l", "--file", files[0]]).status == 0)

        // How long a commit takes here, to aim the kills inside it. The machine's load changes
        // while the test runs, so the window adapts: it shrinks after a commit that finished
        // before its kill and grows after one that was killed, which keeps both outcomes coming
        // (about seven kills in ten once it settles).
        let clock = ContinuousClock()
        let started = clock.now
        #expect(try CLIRunner.run(["commit", "--db", db, "--list", "l", "--file", files[1]]).status == 0)
        let duration = clock.now - started
        var window = max(20_000.0, Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12)

        var rng = SystemRandomNumberGenerator()
        var killed = 0
        var rounds = 0
        var version = 2
        // At least 30 rounds; more (up to 90) while fewer than 10 commits were killed.
        while rounds < 30 || (killed < 10 && rounds < 90) {
            let round = rounds
            rounds += 1
            let file = files[round % 3]
            let process = try CLIRunner.start(["commit", "--db", db, "--list", "l", "--file", file])
            usleep(UInt32(Double.random(in: 0...window, using: &rng)))
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
            }
            process.waitUntilExit()
            if process.terminationReason == .uncaughtSignal {
                killed += 1
                window = min(window * 1.1, 60e6)
            } else {
                window = max(window * 0.8, 1_000)
            }

            // The store opens, verifies, and holds one of the committed snapshots, completely.
            let store = try Store(path: db)
            let report = try store.verify()
            #expect(report.isValid, "round \(round): \(report)")
            let head = try store.snapshot(of: "l")
            #expect(digests.contains(head.digest), "round \(round)")
            #expect(ListDigest.of(head.sections) == head.digest)
            #expect(head.version == version || head.version == version + 1, "round \(round)")
            version = head.version
        }
        #expect(killed >= 10, "only \(killed) of \(rounds) commits were killed")
        #expect(killed < rounds, "every one of \(rounds) commits was killed")
    }

    @Test func concurrentWritersConflictAndReadersSeeWholeCommits() throws {
        let dir = try TemporaryDirectory()
        let db = dir.url.appendingPathComponent("race.liststore").path
        let texts = (0..<6).map { document("w\($0 % 2)", count: 2000, salt: $0 + 1) }
        let files = try texts.enumerated().map { try dir.file("w\($0.offset).json", $0.element) }
        let digests = try texts.map {
            ListDigest.of(try SnapshotDocument.sections(decoding: JSONValue(parsing: $0)) as [ListSection])
        }
        #expect(try CLIRunner.run(["commit", "--db", db, "--list", "l", "--file", files[0]]).status == 0)
        var version = 1
        for round in 0..<4 {
            // Six writers expect the same version; readers read meanwhile.
            let results = _Locked([CLIRunner.Result]())
            let reads = _Locked([CLIRunner.Result]())
            let expected = version
            DispatchQueue.concurrentPerform(iterations: 10) { k in
                if k < 6 {
                    let file = files[(k + round) % 6]
                    let result = try? CLIRunner.run([
                        "commit", "--db", db, "--list", "l", "--file", file, "--expect-version", "\(expected)",
                    ])
                    if let result { results.withLock { $0.append(result) } }
                } else {
                    if let result = try? CLIRunner.run(["show", "--db", db, "--list", "l", "--json"]) {
                        reads.withLock { $0.append(result) }
                    }
                }
            }
            let all = results.withLock { $0 }
            #expect(all.count == 6)
            let winners = all.filter { $0.status == 0 }
            let losers = all.filter { $0.status == 75 }
            // The first writer wins unless it commits the head's own snapshot (then it changes
            // nothing and the next one wins): in every case exactly one new version.
            #expect(winners.count >= 1 && winners.count + losers.count == 6, "\(all.map(\.stderr))")
            for result in all {
                #expect(!result.stderr.contains("locked"), "\(result.stderr)")
                #expect(!result.stderr.contains("busy"), "\(result.stderr)")
            }
            for loser in losers { #expect(loser.stderr.contains("version conflict")) }
            for read in reads.withLock({ $0 }) {
                #expect(read.status == 0, "\(read.stderr)")
                let document = try JSONValue(parsing: read.stdout)
                let sections = try SnapshotDocument.sections(decoding: document) as [ListSection]
                guard case .object(let object) = document, case .string(let digest)? = object["digest"] else {
                    Issue.record("no digest"); continue
                }
                #expect(ListDigest.of(sections).hex == digest)
                #expect(digests.contains(ListDigest(hex: digest)))
            }
            let head = try Store(path: db).snapshot(of: "l")
            #expect(head.version == version + 1 || (head.version == version && winners.allSatisfy { $0.stdout.contains("no changes") }))
            version = head.version
        }
        #expect(try Store(path: db).verify().isValid)
    }
}

/// A value behind a lock, for the test's threads.
final class _Locked<Value>: @unchecked Sendable {
    // Safe: `value` is only reached through `withLock`, which holds the lock.
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
