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

/// `pull` with real processes: a follower that hears commits live and stops on a signal, and pulls
/// killed with SIGKILL at random instants.
@Suite(.serialized, .blockingWaits) struct SyncProcessTests {
    /// The source version a `pull --json` line reports.
    private func version(_ line: String) -> Int? {
        guard case .object(let object)? = try? JSONValue(parsing: line), case .number(let number)? = object["version"] else {
            return nil
        }
        return Int(number.description)
    }

    private func inbox(_ texts: [String], salt: Int) -> [ListSection] {
        [ListSection(model: ListItem(id: "today", json: JSONValue(salt)), elements: texts.map { ListItem(id: $0, json: .string($0 + "\(salt)")) })]
    }

    @Test func followerPrintsNewCommitsLiveAndStopsOnSIGINTAndSIGTERM() throws {
        let dir = try TemporaryDirectory()
        let sourcePath = dir.url.appendingPathComponent("source.liststore").path
        let replicaPath = dir.url.appendingPathComponent("replica.liststore").path
        let source = try Store(path: sourcePath)
        try source.commit(inbox(["a", "b"], salt: 1), to: "inbox")

        let follower = try StreamingProcess(["pull", "--db", sourcePath, "--list", "inbox", "--replica", replicaPath, "--follow", "--json"])
        // The first pull (starting a debug build can take a while on a busy machine).
        let first = follower.waitForLine(timeout: .seconds(60))
        #expect(first.flatMap(version) == 1, "\(follower.output) \(follower.errorOutput)")

        // A commit in this process… (woken, not at the end of its 30 s wait: bounded at 10 s for a
        // busy machine)
        let clock = ContinuousClock()
        try source.commit(inbox(["b", "c", "a"], salt: 2), to: "inbox")
        var committed = clock.now
        let second = follower.waitForLine(timeout: .seconds(30)) { version($0) == 2 }
        let inProcess = clock.now - committed
        #expect(second != nil, "\(follower.output) \(follower.errorOutput)")
        #expect(inProcess < .seconds(10), "the follower took \(inProcess) to print version 2")

        // …and one by another process.
        let file = try dir.file("v3.json", #"{"sections":[{"id":"today","elements":[{"id":"c"},{"id":"d","content":[1]}]}]}"#)
        let commit = try CLIRunner.run(["commit", "--db", sourcePath, "--list", "inbox", "--file", file])
        committed = clock.now
        #expect(commit.status == 0, "\(commit.stderr)")
        let third = follower.waitForLine(timeout: .seconds(30)) { version($0) == 3 }
        let otherProcess = clock.now - committed
        #expect(third != nil, "\(follower.output) \(follower.errorOutput)")
        #expect(otherProcess < .seconds(10), "the follower took \(otherProcess) to print version 3")

        follower.send(SIGINT)
        #expect(follower.waitForExit(timeout: .seconds(30)), "the follower did not stop on SIGINT")
        #expect(follower.process.terminationReason == .exit && follower.process.terminationStatus == 0)
        #expect(follower.errorOutput.isEmpty, "\(follower.errorOutput)")
        // One document per line, one line per pull that applied something.
        #expect(follower.output.map(version) == [1, 2, 3], "\(follower.output)")
        for line in follower.output {
            guard case .object(let object) = try JSONValue(parsing: line) else { Issue.record("not an object: \(line)"); continue }
            #expect(object["applied"] == 1 && object["resynced"] == false && object["reason"] == .null && object["schemaVersion"] == 1)
        }
        let replica = try Store(path: replicaPath)
        #expect(try replica.snapshot(of: "inbox") == source.snapshot(of: "inbox"))

        // SIGTERM stops it too; without --json it prints a line for people.
        let quiet = try StreamingProcess(["pull", "--db", sourcePath, "--list", "inbox", "--replica", replicaPath, "--follow"])
        let line = quiet.waitForLine(timeout: .seconds(60))
        #expect(line == "\(replicaPath): inbox at source version 3 (up to date)", "\(quiet.output) \(quiet.errorOutput)")
        try source.commit(inbox(["z"], salt: 4), to: "inbox")
        let fourth = quiet.waitForLine(skipping: 1, timeout: .seconds(30))
        #expect(fourth == "\(replicaPath): inbox at source version 4 (1 commit applied)")
        quiet.send(SIGTERM)
        #expect(quiet.waitForExit(timeout: .seconds(30)), "the follower did not stop on SIGTERM")
        #expect(quiet.process.terminationReason == .exit && quiet.process.terminationStatus == 0)
        #expect(quiet.errorOutput.isEmpty, "\(quiet.errorOutput)")
        #expect(try replica.snapshot(of: "inbox") == source.snapshot(of: "inbox"))
    }

    @Test func aFollowerOfAServerSurvivesItsRestartAndEndsWhenTheTokenIsRefused() throws {
        let dir = try TemporaryDirectory()
        let sourcePath = dir.url.appendingPathComponent("source.liststore").path
        let replicaPath = dir.url.appendingPathComponent("replica.liststore").path
        let source = try Store(path: sourcePath)
        try source.commit(inbox(["a", "b"], salt: 1), to: "inbox")
        let (server, url) = try ServeCommandTests.serve(sourcePath)
        let port = String(url.split(separator: ":").last ?? "")
        /// `liststore serve` again on the same port.
        func restart(_ extra: [String] = []) throws -> StreamingProcess {
            let server = try StreamingProcess(["serve", "--db", sourcePath, "--port", port] + extra)
            #expect(server.waitForLine(timeout: .seconds(60)) { $0.contains("serving") } != nil, "\(server.errorOutput)")
            return server
        }
        func stop(_ server: StreamingProcess) {
            server.send(SIGTERM)
            #expect(server.waitForExit(timeout: .seconds(30)), "the server did not stop")
        }

        let follower = try StreamingProcess(["pull", "--from", url, "--list", "inbox", "--replica", replicaPath, "--follow", "--json"])
        defer { _ = follower.waitForExit(timeout: .seconds(1)) }
        #expect(follower.waitForLine(timeout: .seconds(60)).flatMap(version) == 1, "\(follower.output) \(follower.errorOutput)")

        // The server goes away: the follower says so once and keeps trying.
        stop(server)
        let clock = ContinuousClock()
        var deadline = clock.now + .seconds(60)
        while !follower.errorOutput.contains("lost the server") && clock.now < deadline { usleep(20_000) }
        #expect(follower.errorOutput.hasPrefix("liststore: lost the server ("), "\(follower.errorOutput)")
        #expect(follower.errorOutput.contains("), retrying in "), "\(follower.errorOutput)")
        try source.commit(inbox(["b", "c"], salt: 2), to: "inbox")
        usleep(1_500_000)  // a few failed attempts
        #expect(follower.process.isRunning, "\(follower.errorOutput)")

        // It comes back: the follower reconnects and gets what was committed meanwhile.
        let restarted = try restart()
        let second = follower.waitForLine(timeout: .seconds(90)) { version($0) == 2 }
        #expect(second != nil, "\(follower.output) \(follower.errorOutput)")
        // Standard error comes through a pipe of its own: the line may arrive after the version's.
        deadline = clock.now + .seconds(30)
        while !follower.errorOutput.contains("reconnected") && clock.now < deadline { usleep(20_000) }
        let errors = follower.errorOutput.split(separator: "\n")
        #expect(errors.count == 2 && errors.last == "liststore: reconnected", "\(follower.errorOutput)")
        #expect(try Store(path: replicaPath).snapshot(of: "inbox") == source.snapshot(of: "inbox"))

        // A server that refuses the token ends the follow: retrying will not heal that.
        stop(restarted)
        deadline = clock.now + .seconds(60)
        while follower.errorOutput.split(separator: "\n").count < 3 && clock.now < deadline { usleep(20_000) }
        let guarded = try restart(["--token", "s3cret"])
        defer { stop(guarded) }
        #expect(follower.waitForExit(timeout: .seconds(90)), "the follower kept going: \(follower.errorOutput)")
        #expect(follower.process.terminationReason == .exit && follower.process.terminationStatus == 77, "\(follower.errorOutput)")
        let last = follower.errorOutput.split(separator: "\n").last ?? ""
        #expect(last.hasPrefix("liststore: error: ") && last.contains("refused the token"), "\(follower.errorOutput)")
        #expect(follower.output.map(version) == [1, 2], "\(follower.output)")
    }

    /// 200 commits of a ~2,000-element list, each changing about 1% of it.
    private func buildSource(at path: String) throws -> Store {
        let store = try Store(path: path)
        var rng = SplitMix64(seed: 0x5EED_1157)
        var sections = (0..<4).map { s in
            ListSection(model: ListItem(id: "s\(s)", json: JSONValue(s)), elements: (0..<500).map { e in
                ListItem(id: "e\(s)-\(e)", json: ["n": JSONValue(e), "text": .string("element \(e) of section \(s)")])
            })
        }
        var next = 0
        for version in 1...200 {
            if version > 1 {
                for k in 0..<12 {
                    let s = rng.bounded(4)
                    guard !sections[s].elements.isEmpty else { continue }
                    let e = rng.bounded(sections[s].elements.count)
                    let id = sections[s].elements[e].id
                    sections[s].elements[e] = ListItem(id: id, json: ["n": JSONValue(version * 100 + k), "text": .string("edited \(id)")])
                }
                for _ in 0..<6 {
                    let from = rng.bounded(4)
                    guard !sections[from].elements.isEmpty else { continue }
                    let item = sections[from].elements.remove(at: rng.bounded(sections[from].elements.count))
                    let to = rng.bounded(4)
                    sections[to].elements.insert(item, at: rng.bounded(sections[to].elements.count + 1))
                }
                for _ in 0..<3 {
                    let s = rng.bounded(4)
                    if !sections[s].elements.isEmpty { sections[s].elements.remove(at: rng.bounded(sections[s].elements.count)) }
                    let t = rng.bounded(4)
                    sections[t].elements.insert(
                        ListItem(id: "n\(next)", json: ["n": JSONValue(-next)]), at: rng.bounded(sections[t].elements.count + 1))
                    next += 1
                }
                if version % 50 == 0 { sections.swapAt(0, 3) }
            }
            try store.commit(sections, to: "l", author: "test", message: "commit \(version)")
        }
        return store
    }

    @Test func pullsKilledAtRandomInstantsLeaveAReplicaThatVerifiesAndResumes() throws {
        let dir = try TemporaryDirectory()
        let sourcePath = dir.url.appendingPathComponent("source.liststore").path
        let source = try buildSource(at: sourcePath)
        #expect(try source.summary(of: "l").version == 200)

        // How long a whole pull takes here, to aim the kills inside one.
        let clock = ContinuousClock()
        let started = clock.now
        let whole = try CLIRunner.run(["pull", "--db", sourcePath, "--list", "l", "--replica", dir.url.appendingPathComponent("whole.liststore").path, "--json"])
        let duration = clock.now - started
        #expect(whole.status == 0, "\(whole.stderr)")
        #expect(version(whole.stdout) == 200)
        let micros = max(50_000, Int(duration.components.seconds) * 1_000_000 + Int(duration.components.attoseconds / 1_000_000_000_000))

        let replicaPath = dir.url.appendingPathComponent("replica.liststore").path
        var rng = SystemRandomNumberGenerator()
        var killed = 0
        var reached = 0
        for round in 0..<10 {
            let process = try CLIRunner.start(["pull", "--db", sourcePath, "--list", "l", "--replica", replicaPath])
            // Ten rounds of at most a sixth of a pull each rarely finish it: most kills land inside.
            usleep(UInt32(Int.random(in: 0...(micros / 6), using: &rng)))
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            if process.terminationReason == .uncaughtSignal { killed += 1 }
            guard FileManager.default.fileExists(atPath: replicaPath) else { continue }  // killed before its first commit

            let verify = try CLIRunner.run(["verify", "--db", replicaPath])
            #expect(verify.status == 0, "round \(round): \(verify.stdout) \(verify.stderr)")
            let replica = try Store(path: replicaPath)
            guard let position = try replica.replicaSource(of: "l") else {
                #expect((try? replica.summary(of: "l")) == nil, "round \(round): a list without a source position")
                continue
            }
            #expect(position.version >= reached, "round \(round): went back from \(reached) to \(position.version)")
            reached = position.version
            let head = try replica.snapshot(of: "l")
            let then = try source.snapshot(of: "l", at: position.version)
            #expect(head.version == position.version && head.digest == position.digest, "round \(round)")
            #expect(then.digest == position.digest && then.sections == head.sections, "round \(round)")
        }
        #expect(killed >= 3, "only \(killed) of 10 pulls were killed")

        let final = try CLIRunner.run(["pull", "--db", sourcePath, "--list", "l", "--replica", replicaPath, "--json"])
        #expect(final.status == 0, "\(final.stderr)")
        let result = try final.object()
        #expect(result["version"] == 200 && result["resynced"] == false, "\(final.stdout)")
        #expect(result["applied"] == JSONValue(200 - reached), "\(final.stdout)")

        // Every source version once, in order, with the source's digest.
        let replica = try Store(path: replicaPath)
        var versions: [Int] = []
        var after = 0
        while true {
            let page = try replica.journal(of: "l", after: after, limit: 64)
            let theirs = try source.journal(of: "l", after: after, limit: 64)
            #expect(page.entries.map(\.digest) == theirs.entries.map(\.digest))
            #expect(page.entries.map(\.parentVersion) == page.entries.map { $0.version - 1 })
            versions += page.entries.map(\.version)
            guard let last = page.entries.last, page.hasMore else { break }
            after = last.version
        }
        #expect(versions == Array(1...200))
        #expect(try replica.replicaSource(of: "l")?.version == 200)
        #expect(try replica.snapshot(of: "l") == source.snapshot(of: "l"))
        #expect(try CLIRunner.run(["verify", "--db", replicaPath]).status == 0)
    }
}

/// SplitMix64 (the benchmarks' generator, Docs/Benchmarks.md), for reproducible edits.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bounded(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
