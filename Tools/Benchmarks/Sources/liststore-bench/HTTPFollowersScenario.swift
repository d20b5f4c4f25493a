#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ListStore
import ListStorePostgres
import ListStoreServer
import Logging

/// http-followers: the load of an HTTP journal server. How long after a commit returns in one process
/// each of 1,000 HTTP followers has it from a `JournalServer` in another process, the followers
/// reading Server-Sent Events (as `HTTPSource` follows) and, on a second side, long-polling. The
/// target is absolute: p99 ≤ 250 ms (the server hears of other processes' commits through inotify,
/// and reads the heads every 20 ms besides). http-followers-10k is the same with 10,000 followers
/// on each side.
///
/// The scenario process creates a store holding a 1,000-element list (one section), raises its
/// open-file limit (RLIMIT_NOFILE's soft limit to the hard one, when below 4,096 or the followers
/// and 64; the server inherits it), and for each side starts a server process of its own (this
/// executable again, with a hidden flag: `JournalServer` on 127.0.0.1, port 0, default
/// configuration, logging errors only), which prints its port. The followers are
/// `HTTPFollowerPool`: raw non-blocking sockets, one keep-alive connection each, one thread with
/// `epoll`. A long-polling follower asks `GET /v1/lists/list/journal?since=V&limit=100&wait=30` from
/// the last version it has, and asks again as soon as the pool has read an answer, timestamping
/// each new version as the answer that holds it was complete at its socket; an event-stream
/// follower asks `GET /v1/lists/list/events?since=V` once and timestamps each event as it was
/// complete at its socket (the pool's "Two times" says what that leaves out, and what not).
///
/// - ours: 1,000 event-stream followers (the headline), and 1,000 long-polling ones (`longPoll…`
///   in details), each side with a server of its own;
/// - the baseline, measured first in the same run: the same server (a fresh process) and writer with
///   one long-polling follower, so that the ratio says what 1,000 clients cost over one.
///
/// For each side: once every follower waits (its request sent), one untimed warm-up commit, and once
/// every follower has it and waits again, 200 ms of quiet; then the writer in the scenario process
/// (not the server's: the server learns of the commits as it does of any other process's) makes
/// `commitCount` commits with `Store.commit`, `spacingMs` apart, each changing the content of
/// `changedPerCommit` elements, and takes the time as each `commit` returns. Times are
/// `clock_gettime(CLOCK_MONOTONIC)`; latency = arrival − commit return, over every (follower, commit)
/// pair, where arrival is when the answer or event was complete at the follower's socket, as the
/// kernel noted it (`HTTPFollowerPool`'s "Two times"; on Linux); when the followers' one thread read
/// it is the `read…` details. Every follower must have every commit (`missingDeliveries` 0): a missing one is a failure.
/// Once every follower has every commit and waits again, the scenario reads the server's
/// `GET /metrics` (details `serverMetrics.…` and `longPollServerMetrics.…`: waiting followers, event
/// streams at the head, open connections, requests answered, the head version, the store's size).
/// Then the scenario reads the server's peak resident memory (`VmHWM` of /proc/<pid>/status), closes
/// the connections, stops the server with SIGTERM (a graceful shutdown) and waits for it.
///
/// ours_ms and baseline_ms are p99 latencies (nearest rank); details hold p50, p99, min and max of
/// each side, p50 and p99 to the read (`readP50Ms`, `readP99Ms`, `longPollReadP50Ms`,
/// `longPollReadP99Ms`), the deliveries, the missing ones, the follower count, connection errors
/// and reconnects, and peakMemoryMB: the SERVER's peak with the event-stream followers
/// (longPollPeakMemoryMB with the long-polling ones, baselinePeakMemoryMB with one). The followers
/// and the writer share the machine with the server.
///
/// followers-beside-1m: one follower on each side, in a store that also holds a list of 1,000,000
/// elements (1,000 sections of 1,000, about 98 MB of JSON, committed once before the servers start
/// and never touched): what a follower of a small list waits when another list of the store is big.
/// Target: p50 ≤ 10 ms and max ≤ 50 ms (`maxMs`, and the headline p99 of its 100 deliveries).
struct HTTPFollowersScenario {
    static let name = "http-followers"
    /// The same at 10,000 followers (issue: 10,000 followers on one server).
    static let name10k = "http-followers-10k"
    static let baselineName = "the same server and writer with 1 follower"
    static let target = Target(minRatio: nil, maxOursMs: 250)
    static let listName = "list"
    static let elementCount = 1_000
    static let followerCount = 1_000
    static let commitCount = 100
    static let spacingMs = 50
    static let changedPerCommit = 3
    /// The open-file soft limit below which it is raised to the hard limit.
    static let wantedOpenFiles: rlim_t = 4_096
    /// Hidden arguments: `liststore-bench --serve-journal PATH`.
    static let serveFlag = "--serve-journal"

    static var scenario: Scenario { scenario(name: name, followers: followerCount) }

    /// http-followers-10k: the same with 10,000 followers on each side (the open-file limit must allow
    /// them: the scenario raises its soft limit to the hard one).
    static var scenario10k: Scenario { scenario(name: name10k, followers: 10_000) }

    /// followers-beside-1m: one follower of the small list beside a list of 1,000,000 elements.
    static let nameBeside1m = "followers-beside-1m"
    static var scenarioBeside1m: Scenario {
        scenario(name: nameBeside1m, followers: 1, beside: 1_000_000, target: Target(minRatio: nil, maxOursMs: 50))
    }

    private static func scenario(name: String, followers: Int, beside: Int = 0, target: Target = target) -> Scenario {
        Scenario(
            name: name,
            summary: "commit → delivered to \(followers) HTTP follower\(followers == 1 ? "" : "s") of a journal server reading Server-Sent Events "
                + (beside > 0 ? "beside a list of \(beside) elements " : "") + "(p99; long polls in details) vs \(baselineName)",
            target: target
        ) { () throws(ScenarioFailure) in
            try HTTPFollowersScenario(name: name, followerCount: followers, besideElements: beside, target: target).run()
        }
    }

    /// The scenario's name.
    let name: String
    /// How many followers ours has.
    let followerCount: Int
    /// How many elements the store's other list holds (0: none).
    let besideElements: Int
    let target: Target
    let log: ScenarioLog

    init(name: String, followerCount: Int, besideElements: Int = 0, target: Target = Self.target) {
        self.name = name
        self.followerCount = followerCount
        self.besideElements = besideElements
        self.target = target
        log = ScenarioLog(scenario: name)
    }

    /// What one side measured.
    struct Side {
        var followers: Int
        /// Arrival at the follower's socket − commit return (ms; see `HTTPFollowerPool`'s "Two times").
        var latencies: [Double]
        /// The same, to when the follower pool's one thread read it.
        var readLatencies: [Double] = []
        var missing: Int
        var peakMemoryMB: Double?
        var errors: Int
        var reconnects: Int
        /// What the server's `GET /metrics` said once every commit was delivered, the followers
        /// waiting for the next.
        var metrics: [String: Double] = [:]
        var p50: Double { latencies.isEmpty ? .nan : LiveDeliveryScenario.percentile(latencies, 50) }
        var p99: Double { latencies.isEmpty ? .nan : LiveDeliveryScenario.percentile(latencies, 99) }
        var readP50: Double { readLatencies.isEmpty ? .nan : LiveDeliveryScenario.percentile(readLatencies, 50) }
        var readP99: Double { readLatencies.isEmpty ? .nan : LiveDeliveryScenario.percentile(readLatencies, 99) }
    }

    func run() throws(ScenarioFailure) -> ScenarioResult {
        signal(SIGPIPE, SIG_IGN)
        let openFiles = try Self.raiseOpenFileLimit(log, wanted: max(Self.wantedOpenFiles, rlim_t(followerCount + 64)))
        guard openFiles >= rlim_t(followerCount + 64) else {
            throw log.failure("the open-file limit is \(openFiles), too low for \(followerCount) connections")
        }
        let directory = try log.attempt("creating a temporary directory") { try TemporaryDirectory(label: name) }
        defer { directory.remove() }
        let path = directory.file("http.liststore")
        var elements = (0..<Self.elementCount).map { StoreInput.listItem(Item("e\($0)", $0)) }
        let model = StoreInput.listItem(Item("s", 0))
        let store = try log.attempt("creating the store") { () throws -> Store in
            let store = try Store(path: path)
            try store.commit([ListSection(model: model, elements: elements)], to: Self.listName)
            if besideElements > 0 {
                let sections = (0..<max(1, besideElements / 1_000)).map { s in
                    ListSection(
                        model: StoreInput.listItem(Item("big-s\(s)", s)),
                        elements: (0..<min(1_000, besideElements)).map { StoreInput.listItem(Item("big-\(s)-\($0)", $0)) })
                }
                try store.commit(sections, to: "big")
            }
            try store.checkpoint()
            return store
        }
        var head = 1
        var changes = 0
        /// Commits `changedPerCommit` new contents; returns the new version.
        func commit() throws -> Int {
            for _ in 0..<Self.changedPerCommit {
                let k = changes % Self.elementCount
                elements[k] = StoreInput.listItem(Item("e\(k)", Self.elementCount + changes))
                changes += 1
            }
            let result = try store.commit([ListSection(model: model, elements: elements)], to: Self.listName)
            guard result.changed, result.version == head + 1 else {
                throw ScenarioFailure(scenario: name, message: "a commit after \(head) made version \(result.version)")
            }
            head = result.version
            return head
        }

        var failures = [String]()
        var sides = [Side]()
        for (followers, events) in [(1, false), (followerCount, false), (followerCount, true)] {
            let who = followers == 1 ? "baseline (1 follower)" : "ours (\(followers) \(events ? "event-stream" : "long-poll") followers)"
            log.progress("\(who): starting the server in a process of its own")
            let server = try log.attempt("starting the server") { try ServerProcess(path: path) }
            let firstVersion = head + 2  // after the warm-up commit
            let lastVersion = firstVersion + Self.commitCount - 1
            let pool = HTTPFollowerPool(
                count: followers, port: server.port, list: Self.listName, since: head,
                firstVersion: firstVersion, lastVersion: lastVersion, events: events)
            let thread = Thread { pool.run() }
            thread.name = "http-followers"
            thread.start()

            var returnedAt = [Int64]()
            let committed = Result { () throws -> Void in
                var started = MonotonicClock.nanoseconds()
                try Self.waitFor("every follower waiting", pool, timeoutSeconds: 120) { $0.waitingSince >= head }
                log.progress("\(who): \(followers) followers waiting after "
                    + "\(Format.fixed(Double(MonotonicClock.nanoseconds() - started) / 1e6, decimals: 0)) ms; a warm-up commit")
                let warmUp = try commit()
                started = MonotonicClock.nanoseconds()
                try Self.waitFor("the warm-up commit", pool, timeoutSeconds: 60) { $0.seen >= warmUp && $0.waitingSince >= warmUp }
                log.progress("\(who): every follower had the warm-up commit after "
                    + "\(Format.fixed(Double(MonotonicClock.nanoseconds() - started) / 1e6, decimals: 1)) ms; "
                    + "\(Self.commitCount) commits, \(Self.spacingMs) ms apart")
                var start = MonotonicClock.nanoseconds() + 200_000_000
                for _ in 0..<Self.commitCount {
                    MonotonicClock.sleep(until: start)
                    _ = try commit()
                    returnedAt.append(MonotonicClock.nanoseconds())
                    start += Int64(Self.spacingMs) * 1_000_000
                }
                try Self.waitFor("every commit at every follower", pool, timeoutSeconds: 30) { $0.seen >= lastVersion }
                try Self.waitFor("every follower waiting again", pool, timeoutSeconds: 30) { $0.waitingSince >= lastVersion }
            }
            let metrics = Self.scrapeMetrics(port: server.port)
            log.progress("\(who): the server's /metrics: " + metrics.sorted { $0.key < $1.key }.map { "\($0.key) \(Format.fixed($0.value, decimals: 0))" }.joined(separator: ", "))
            pool.stop()
            pool.finished.wait()
            let progress = pool.current
            let peak = server.peakMemoryMB()
            let stopped = server.stop(timeout: .seconds(30))
            if case .failure(let error) = committed {
                log.progress("\(who): \(error)")
                failures.append("\(who): \(error)")
            }
            if !stopped { failures.append("\(who): the server did not stop within 30 s of SIGTERM") }
            if progress.errors > 0 || progress.reconnects > 0 {
                log.progress("\(who): \(progress.errors) errors (\(progress.badStatuses) answers other than 200), "
                    + "\(progress.reconnects) reconnects; " + progress.errorSamples.joined(separator: "; "))
            }

            let (latencies, readLatencies, missing) = Self.latencies(
                pool, followers: followers, span: lastVersion - firstVersion + 1, committedAt: returnedAt)
            if missing > 0 {
                failures.append("\(who): \(missing) of \(followers * (lastVersion - firstVersion + 1)) deliveries missing")
            }
            let side = Side(
                followers: followers, latencies: latencies, readLatencies: readLatencies, missing: missing, peakMemoryMB: peak,
                errors: progress.errors, reconnects: progress.reconnects, metrics: metrics)
            log.progress("\(who): \(latencies.count) deliveries, \(missing) missing; p50 \(Format.fixed(side.p50, decimals: 2)) ms, "
                + "p99 \(Format.fixed(side.p99, decimals: 2)) ms, max \(Format.fixed(latencies.max() ?? .nan, decimals: 2)) ms "
                + "(read by the followers' thread: p50 \(Format.fixed(side.readP50, decimals: 2)) ms, p99 \(Format.fixed(side.readP99, decimals: 2)) ms); "
                + "server peak \(peak.map { Format.fixed($0, decimals: 1) } ?? "?") MB")
            sides.append(side)
        }
        for failure in failures { log.progress(failure) }
        let (baseline, longPolls, streams) = (sides[0], sides[1], sides[2])
        guard !streams.latencies.isEmpty, !baseline.latencies.isEmpty else {
            throw log.failure("no deliveries: " + failures.joined(separator: "; "))
        }

        // The headline is the event-stream followers: `HTTPSource` follows through event streams.
        var details: [String: JSONValue] = [
            "followers": .int(streams.followers),
            "commits": .int(Self.commitCount),
            "deliveries": .int(streams.latencies.count),
            "missingDeliveries": .int(streams.missing),
            "p50Ms": .number(streams.p50, decimals: 2),
            "p99Ms": .number(streams.p99, decimals: 2),
            "minMs": .number(streams.latencies.min() ?? 0, decimals: 2),
            "maxMs": .number(streams.latencies.max() ?? 0, decimals: 2),
            "readP50Ms": .number(streams.readP50, decimals: 2),
            "readP99Ms": .number(streams.readP99, decimals: 2),
            "errors": .int(streams.errors),
            "reconnects": .int(streams.reconnects),
            "baselineFollowers": .int(baseline.followers),
            "baselineDeliveries": .int(baseline.latencies.count),
            "baselineMissingDeliveries": .int(baseline.missing),
            "baselineP50Ms": .number(baseline.p50, decimals: 2),
            "baselineP99Ms": .number(baseline.p99, decimals: 2),
            "baselineMinMs": .number(baseline.latencies.min() ?? 0, decimals: 2),
            "baselineMaxMs": .number(baseline.latencies.max() ?? 0, decimals: 2),
            "baselineErrors": .int(baseline.errors),
            "openFileLimit": .int(Int(openFiles)),
            "longPollP50Ms": .number(longPolls.p50, decimals: 2),
            "longPollP99Ms": .number(longPolls.p99, decimals: 2),
            "longPollMaxMs": .number(longPolls.latencies.max() ?? 0, decimals: 2),
            "longPollReadP50Ms": .number(longPolls.readP50, decimals: 2),
            "longPollReadP99Ms": .number(longPolls.readP99, decimals: 2),
            "longPollDeliveries": .int(longPolls.latencies.count),
            "longPollMissingDeliveries": .int(longPolls.missing),
            "longPollErrors": .int(longPolls.errors),
            "longPollReconnects": .int(longPolls.reconnects),
        ]
        // Flat keys (`serverMetrics.waiting_followers`): details cross from the scenario's child
        // process as single values.
        for (side, prefix) in [(streams, "serverMetrics"), (longPolls, "longPollServerMetrics")] {
            for (name, value) in side.metrics { details["\(prefix).\(name)"] = .int(Int(value)) }
        }
        if let mb = longPolls.peakMemoryMB { details["longPollPeakMemoryMB"] = .number(mb, decimals: 1) }
        if let mb = streams.peakMemoryMB { details["peakMemoryMB"] = .number(mb, decimals: 1) }
        if let mb = baseline.peakMemoryMB { details["baselinePeakMemoryMB"] = .number(mb, decimals: 1) }
        return ScenarioResult(
            scenario: name, oursMs: streams.p99, baseline: Self.baselineName, baselineMs: baseline.p99,
            target: target, details: details, oursRuns: "p99 of \(streams.latencies.count)",
            baselineRuns: "p99 of \(baseline.latencies.count)", failures: failures)
    }

    /// The figures of the server's `GET /metrics` this scenario reports: its waiting followers, its
    /// event streams at the head, the requests it answered, the list's head version and the store's
    /// size. Empty when the server does not answer.
    static func scrapeMetrics(port: Int) -> [String: Double] {
        guard let fd = KeepAliveClient.connectLoopback(port: port) else { return [:] }
        defer { close(fd) }
        let request = Array("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else { return [:] }
        var answer = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            answer += buffer[0..<count]
        }
        var figures = [String: Double]()
        for line in String(decoding: answer, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let name = line[..<space]
            let metric = name.prefix { $0 != "{" }
            switch metric {
            case "liststore_waiting_followers", "liststore_waits_at_head", "liststore_store_size_bytes", "liststore_open_connections":
                figures[String(metric.dropFirst("liststore_".count))] = value
            case "liststore_list_head_version":
                figures["head_version"] = value
            case "liststore_http_requests_total":
                figures["requests_answered", default: 0] += value
            default:
                continue
            }
        }
        return figures
    }

    /// Raises the soft open-file limit to the hard one when it is below `wanted`; returns the
    /// soft limit in force.
    static func raiseOpenFileLimit(_ log: ScenarioLog, wanted: rlim_t = wantedOpenFiles) throws(ScenarioFailure) -> rlim_t {
        #if os(Linux)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else {
            throw log.failure("getrlimit(RLIMIT_NOFILE): \(String(cString: strerror(errno)))")
        }
        if limit.rlim_cur < wanted && limit.rlim_cur < limit.rlim_max {
            let before = limit.rlim_cur
            limit.rlim_cur = limit.rlim_max
            guard setrlimit(resource, &limit) == 0 else {
                throw log.failure("setrlimit(RLIMIT_NOFILE, \(limit.rlim_max)): \(String(cString: strerror(errno)))")
            }
            log.progress("raised the open-file limit from \(before) to \(limit.rlim_cur)")
        }
        return limit.rlim_cur
    }

    /// The latencies (ms) of every (follower, commit) pair of `pool`: arrival − `committedAt` of the
    /// commit, at the follower's socket and when the pool's thread read it (see `HTTPFollowerPool`'s
    /// "Two times"); and how many pairs never arrived.
    static func latencies(
        _ pool: HTTPFollowerPool, followers: Int, span: Int, committedAt: [Int64]
    ) -> (latencies: [Double], readLatencies: [Double], missing: Int) {
        var latencies = [Double](), readLatencies = [Double]()
        var missing = 0
        for f in 0..<followers {
            for c in 0..<span {
                let at = pool.arrivals[f * span + c]
                if at == 0 || c >= committedAt.count {
                    missing += 1
                } else {
                    latencies.append(Double(at - committedAt[c]) / 1e6)
                    readLatencies.append(Double(pool.readArrivals[f * span + c] - committedAt[c]) / 1e6)
                }
            }
        }
        return (latencies, readLatencies, missing)
    }

    /// Waits until `condition` holds for the pool's progress; throws after `timeoutSeconds`.
    static func waitFor(
        _ what: String, _ pool: HTTPFollowerPool, timeoutSeconds: Int64, scenario: String = name,
        _ condition: (HTTPFollowerPool.Progress) -> Bool
    ) throws {
        let deadline = MonotonicClock.nanoseconds() + timeoutSeconds * 1_000_000_000
        while true {
            let progress = pool.current
            if condition(progress) { return }
            if MonotonicClock.nanoseconds() > deadline {
                throw ScenarioFailure(
                    scenario: scenario,
                    message: "timed out after \(timeoutSeconds) s waiting for \(what) (slowest follower at version "
                        + "\(progress.seen), \(progress.errors) errors, \(progress.reconnects) reconnects"
                        + (progress.errorSamples.isEmpty ? "" : ": " + progress.errorSamples.joined(separator: "; ")) + ")")
            }
            MonotonicClock.sleep(until: MonotonicClock.nanoseconds() + 1_000_000)
        }
    }

    // MARK: - The server process

    /// The journal server in a process of its own: it says "port <n>" on its stdout once it serves.
    final class ServerProcess {
        let process = Process()
        let output = Pipe()
        private(set) var port = 0

        /// Starts the server of the store file at `path`.
        convenience init(path: String) throws {
            try self.init(arguments: [HTTPFollowersScenario.serveFlag, path])
        }

        /// Starts this executable with `arguments` (a serve flag and its store).
        init(arguments: [String]) throws {
            process.executableURL = ScenarioResult.executableURL
            process.arguments = arguments
            process.standardOutput = output
            try process.run()
            var line = [UInt8]()
            while !line.contains(UInt8(ascii: "\n")) {
                let data = output.fileHandleForReading.availableData
                if data.isEmpty {
                    process.waitUntilExit()
                    throw ScenarioFailure(
                        scenario: HTTPFollowersScenario.name,
                        message: "the server ended with status \(process.terminationStatus) before it served")
                }
                line += data
            }
            let text = String(decoding: line, as: UTF8.self)
            guard text.hasPrefix("port "), let port = Int(text.dropFirst(5).prefix { $0 != "\n" }), port > 0 else {
                throw ScenarioFailure(scenario: HTTPFollowersScenario.name, message: "the server said \(text.debugDescription)")
            }
            self.port = port
        }

        /// The server's peak resident size in MiB (`VmHWM`), or nil when it cannot be read.
        func peakMemoryMB() -> Double? {
            #if os(Linux)
            PeakMemory.peakMB(ofProcess: String(process.processIdentifier))
            #else
            nil
            #endif
        }

        /// Sends SIGTERM and waits for the server to end (SIGKILL after `timeout`); returns whether it
        /// ended by itself.
        func stop(timeout: Duration) -> Bool {
            kill(process.processIdentifier, SIGTERM)
            let deadline = ContinuousClock.now + timeout
            while process.isRunning && ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.005)
            }
            let stopped = !process.isRunning
            if !stopped { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            return stopped && process.terminationStatus == 0
        }
    }

    /// Runs the server when the arguments ask for it; returns its exit status, or nil.
    static func serverMain(_ arguments: [String]) -> Int32? {
        let withAccess = arguments.count == 4 && arguments[1] == SetFollowersScenario.serveFlag
        guard withAccess || (arguments.count == 3 && (arguments[1] == serveFlag || arguments[1] == PGFollowersScenario.serveFlag)) else { return nil }
        // A server whose parent went away does not serve forever.
        let parent = getppid()
        let watchdog = DispatchSource.makeTimerSource(queue: .global())
        watchdog.schedule(deadline: .now() + 1, repeating: 1)
        watchdog.setEventHandler {
            if getppid() != parent {
                StandardError.line("\(name): the server's parent went away; exiting")
                exit(3)
            }
        }
        watchdog.resume()
        do {
            let store: any ListStoreEngine =
                arguments[1] == PGFollowersScenario.serveFlag ? try runBlocking { try await PostgresStore(url: arguments[2]) } : try Store(path: arguments[2])
            var logger = Logger(label: "liststore-bench.server") { StreamLogHandler.standardError(label: $0) }
            logger.logLevel = .error
            var configuration = JournalServer.Configuration(port: 0)
            if withAccess {
                // set-followers: users' tokens, verified against the access file.
                let file = try Data(contentsOf: URL(fileURLWithPath: arguments[3]))
                configuration = .init(port: 0, token: "service", access: try runBlocking { try await AccessConfiguration(json: Array(file)) })
            }
            let server = JournalServer(store: store, configuration: configuration, logger: logger)
            try runBlocking {
                try await server.run(handlingSignals: true) { port in LiveDeliveryScenario.writeOut("port \(port)\n") }
            }
            watchdog.cancel()
            return 0
        } catch {
            StandardError.line("\(name): the server failed: \(error)")
            return 1
        }
    }
}
