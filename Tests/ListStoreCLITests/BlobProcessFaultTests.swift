import Foundation
import ListDiffTestSupport
import ListJSON
import ListStore
import ListStoreTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Attachments through processes that die: a `push` that uploads a video killed with SIGKILL each
/// time the source has taken more of its bytes, and its server stopped and started again; and a
/// `blob get --from` killed each time the replica has taken more, the server now and then too.
/// Each comes back and finishes; no store ends with a blob whose bytes are not its hash, and every
/// store verifies.
@Suite(.blockingWaits) struct BlobProcessFaultTests {
    @Test func uploadsAndFetchesKilledMidTransferFinishWhenRunAgain() async throws {
        let f = try OfflineCommandTests.Fixture()
        var random = SplitMix64(seed: 0xB10B_F417)
        let bytes = (0..<(24 * 1_048_576 + 77)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let file = try f.dir.file("VID_1.mov", bytes)
        let server = try ConvergenceProcessTests.Server(db: f.source)
        defer { server.stop() }
        let (phone, tablet) = (f.path("phone.liststore"), f.path("tablet.liststore"))
        for replica in [phone, tablet] {
            #expect(try await CLIRunner.runOffPool(["pull", "--from", server.url, "--list", "inbox", "--replica", replica]).status == 0)
        }
        let put = try await CLIRunner.runOffPool(["blob", "put", "--db", phone, "--list", "inbox", file])
        #expect(put.status == 0, "\(put.stderr)")
        let id = try #require(try JSONValue(parsing: Array(put.stdout.utf8))["$blob"]?.stringValue)
        let document = #"{"sections":[{"id":"s","elements":[{"id":"v","content":{"video":"# + put.stdout.dropLast() + "}}]}]}"
        #expect(try await CLIRunner.runOffPool(["commit", "--db", phone, "--list", "inbox", "--file", try f.dir.file("v.json", document)]).status == 0)

        /// Runs `liststore arguments…`, waits until the store at `watched` holds more of the video's
        /// bytes than after the round before and not all of them (the transfer is under way), and
        /// kills it (SIGKILL); with `restarting` (always for a push, whose server goes on writing
        /// what the kernel took from it), or now and then, stops the server too (SIGKILL or SIGTERM)
        /// and starts it again, so that what the store kept is known before the next round.
        /// Returns whether the transfer was under way when the kill came.
        let hash = ContentHash(of: bytes)
        var kept = 0
        func killed(_ arguments: [String], watching watched: String, restarting: Bool) async throws -> Bool {
            let child = try CLIRunner.start(arguments)
            defer {
                if child.isRunning {
                    kill(child.processIdentifier, SIGKILL)
                    child.waitUntilExit()
                }
            }
            let store = try Store(path: watched)
            defer { try? store.close() }
            // The transfer is stopped while the store is looked at (SIGSTOP), and goes on for a
            // millisecond between two looks: on a loaded machine a look can take longer than the
            // whole transfer. The looks run on a thread of their own, so that the time between
            // them is that millisecond, not a wait for a turn of the tasks' threads (the whole suite
            // at once kept them from their next look while the transfer ended, 0 and 1 cuts in the
            // fresh-clone run of 2026-12-01).
            let (pid, before) = (child.processIdentifier, kept)
            let midway = try await Self.onThread { () throws -> Bool in
                let deadline = ContinuousClock.now + .seconds(120)
                while ContinuousClock.now < deadline {
                    kill(pid, SIGSTOP)
                    let status = Self.blocking { try await store.blob(hash, of: "inbox") }
                    kill(pid, SIGCONT)
                    if try status.get().map({ !$0.isStored && $0.uploaded > before }) ?? false { return true }
                    if !child.isRunning { return false }
                    usleep(1_000)
                }
                throw WaitTimedOut(description: "\(arguments[0]) neither moved the video's bytes into \(watched) nor ended in 120 s")
            }
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            if restarting || random.next() % 3 == 0 { try server.restart(killing: random.next() % 2 == 0) }
            kept = try await store.blob(hash, of: "inbox")?.uploaded ?? 0
            return midway
        }
        /// Whether the store at `path` holds the video whole.
        func whole(_ path: String) async throws -> Bool {
            let store = try Store(path: path)
            defer { try? store.close() }
            return try await store.blob(hash, of: "inbox")?.isStored == true
        }
        // Rounds until the video is whole at the source (the bytes a killed push had sent on may
        // finish it): at least two of them land mid-upload.
        var cuts = 0
        for _ in 0..<6 {
            guard try await !whole(f.source) else { break }
            if try await killed(["push", "--from", server.url, "--list", "inbox", "--replica", phone], watching: f.source, restarting: true) { cuts += 1 }
        }
        #expect(cuts >= 2, "\(cuts) pushes were killed mid-upload")
        let pushed = try await CLIRunner.runOffPool(["push", "--from", server.url, "--list", "inbox", "--replica", phone])
        #expect(pushed.status == 0, "\(pushed.stderr)")
        let atSource = try await CLIRunner.runOffPool(["blob", "get", "--db", f.source, "--list", "inbox", id, "--out", f.path("source.mov")])
        #expect(atSource.status == 0, "\(atSource.stderr)")
        #expect(FileManager.default.contents(atPath: f.path("source.mov")).map { [UInt8]($0) == bytes } == true, "the source's bytes are not the video's")

        #expect(try await CLIRunner.runOffPool(["pull", "--from", server.url, "--list", "inbox", "--replica", tablet]).status == 0)
        let out = f.path("shown.mov")
        (kept, cuts) = (0, 0)
        for _ in 0..<4 {
            guard try await !whole(tablet) else { break }
            let get = ["blob", "get", "--db", tablet, "--list", "inbox", id, "--out", out, "--from", server.url]
            if try await killed(get, watching: tablet, restarting: false) { cuts += 1 }
        }
        #expect(cuts >= 2, "\(cuts) fetches were killed mid-fetch")
        let fetched = try await CLIRunner.runOffPool(["blob", "get", "--db", tablet, "--list", "inbox", id, "--out", out, "--from", server.url])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(FileManager.default.contents(atPath: out).map { [UInt8]($0) == bytes } == true, "the bytes fetched are not the video's")
        server.stop()
        for store in [f.source, phone, tablet] {
            let verified = try await CLIRunner.runOffPool(["verify", "--db", store])
            #expect(verified.status == 0, "\(store): \(verified.stdout) \(verified.stderr)")
        }
    }

    /// Runs `work` on a thread of its own, and returns what it returns.
    static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    /// Runs `work` in a task and blocks the calling thread (never one of the tasks' threads: see
    /// `onThread`) until it ends.
    static func blocking<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
        let result = _Locked<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let outcome: Result<T, any Error>
            do { outcome = .success(try await work()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }
}
