#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Foundation
import ListStore

/// cached-followers-10k: 10,000 long-polling followers of one list, each with a token of its own,
/// through nginx configured by the shipped `Tools/deploy/nginx/nginx.conf.template` in front of a
/// `JournalServer` with users (an access file of one ES256 key granting everyone `news`). How long
/// after a commit returns each follower has it, and how many requests reach the server per commit.
/// Target: p99 ≤ 500 ms; details `originRequestsPerCommit` (journal and access requests the server
/// answered during the commits, per commit) ≤ 2 per nginx worker (the template runs 2), and the
/// server's peak ≤ 256 MB.
///
/// The scenario process makes the store (a 1,000-element list), the access file and the tokens,
/// starts the server in a process of its own (the hidden mode of set-followers), fills the template
/// (`${LISTEN}`, `${UPSTREAM}`, `${DIR}`) and starts Debian's nginx (`nginx -p DIR -c FILE`, in the
/// foreground); the followers are `HTTPFollowerPool` against nginx's port. Once every follower waits
/// and a warm-up commit reached all of them (which also fills nginx's cache of access answers, kept
/// a minute), the writer makes `commitCount` commits `spacingMs` apart (2 a second) and takes the
/// time as each returns; the server's `GET /metrics` is read before and after them.
///
/// ours_ms is the p99 latency (nearest rank) of every (follower, commit) pair; the baseline is the
/// same through nginx with one follower. The server's own p99 with the followers straight to it is
/// http-followers-10k's long polls.
struct CachedFollowersScenario {
    static let name = "cached-followers-10k"
    static let baselineName = "the same through nginx with 1 follower"
    static let target = Target(minRatio: nil, maxOursMs: 500)
    static let listName = "news"
    static let elementCount = 1_000
    static let followerCount = 10_000
    static let commitCount = 60
    static let spacingMs = 500
    static let nginxWorkers = 2

    static var scenario: Scenario {
        Scenario(
            name: name,
            summary: "commit → delivered to \(followerCount) long-polling followers with tokens of their own through the shipped nginx configuration (p99; requests reaching the server per commit in details) vs \(baselineName)",
            target: target
        ) { () throws(ScenarioFailure) in try CachedFollowersScenario().run() }
    }

    let log = ScenarioLog(scenario: name)

    func run() throws(ScenarioFailure) -> ScenarioResult {
        do {
            return try measure()
        } catch let failure as ScenarioFailure {
            throw failure
        } catch {
            throw log.failure("\(error)")
        }
    }

    /// The nginx to run: on PATH, or Debian's.
    static func nginx() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":") + ["/usr/sbin"] where FileManager.default.isExecutableFile(atPath: "\(directory)/nginx") {
            return "\(directory)/nginx"
        }
        return nil
    }

    /// The shipped template, found from the current directory or this executable upward.
    static func template() -> String? {
        var candidates = [FileManager.default.currentDirectoryPath, ScenarioResult.executableURL.deletingLastPathComponent().path]
        var found: String?
        while found == nil, let directory = candidates.popLast() {
            var url = URL(fileURLWithPath: directory)
            for _ in 0..<8 {
                let file = url.appendingPathComponent("Tools/deploy/nginx/nginx.conf.template").path
                if FileManager.default.fileExists(atPath: file) { found = file; break }
                url = url.deletingLastPathComponent()
            }
        }
        return found
    }

    private func measure() throws -> ScenarioResult {
        signal(SIGPIPE, SIG_IGN)
        guard let nginx = Self.nginx() else { throw log.failure("no nginx (apt-get install nginx)") }
        guard let template = Self.template() else { throw log.failure("no Tools/deploy/nginx/nginx.conf.template above the current directory") }
        let openFiles = try HTTPFollowersScenario.raiseOpenFileLimit(log, wanted: rlim_t(3 * Self.followerCount + 256))
        guard openFiles >= rlim_t(Self.followerCount + 64) else { throw log.failure("the open-file limit is \(openFiles), too low") }
        let directory = try TemporaryDirectory(label: Self.name)
        defer { directory.remove() }
        let path = directory.file("cached.liststore")
        var elements = (0..<Self.elementCount).map { StoreInput.listItem(Item("e\($0)", $0)) }
        let model = StoreInput.listItem(Item("s", 0))
        let store = try Store(path: path)
        try store.commit([ListSection(model: model, elements: elements)], to: Self.listName)
        try store.checkpoint()
        var head = 1
        var changes = 0
        func commit() throws -> Int {
            for _ in 0..<3 {
                let k = changes % Self.elementCount
                elements[k] = StoreInput.listItem(Item("e\(k)", Self.elementCount + changes))
                changes += 1
            }
            head = try store.commit([ListSection(model: model, elements: elements)], to: Self.listName).version
            return head
        }

        let key = P256.Signing.PrivateKey()
        let accessPath = directory.file("access.json")
        let rules = #"{"keys": {"keys": [\#(SetFollowersScenario.jwk(key))]}, "issuer": "https://auth.example", "audience": "liststore", "rules": [{"lists": "news", "grant": "read"}]}"#
        guard FileManager.default.createFile(atPath: accessPath, contents: Data(rules.utf8)) else { throw log.failure("cannot write \(accessPath)") }
        let tokens = try (0..<Self.followerCount).map { try AuthOverheadScenario.token(key, sub: "u\($0)") }

        var sides: [(latencies: [Double], missing: Int, peak: Double?, origin: Double, errors: Int)] = []
        var failures: [String] = []
        for followers in [1, Self.followerCount] {
            let who = followers == 1 ? "baseline (1 follower through nginx)" : "ours (\(followers) followers through nginx)"
            let server = try HTTPFollowersScenario.ServerProcess(arguments: [SetFollowersScenario.serveFlag, path, accessPath])
            let cache = directory.file("nginx-\(followers)")
            try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
            chmod(cache, 0o777)
            let listen = Self.freePort()
            let config = try String(contentsOfFile: template, encoding: .utf8)
                .replacingOccurrences(of: "${LISTEN}", with: "127.0.0.1:\(listen)")
                .replacingOccurrences(of: "${UPSTREAM}", with: "127.0.0.1:\(server.port)")
                .replacingOccurrences(of: "${DIR}", with: cache)
            let configPath = cache + "/nginx.conf"
            try config.write(toFile: configPath, atomically: true, encoding: .utf8)
            let proxy = Process()
            proxy.executableURL = URL(fileURLWithPath: nginx)
            proxy.arguments = ["-p", cache, "-c", configPath]
            proxy.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try proxy.run()
            defer {
                if proxy.isRunning { proxy.terminate() }
                proxy.waitUntilExit()
                _ = server.stop(timeout: .seconds(30))
            }
            guard Self.waitForPort(listen, seconds: 30) else { throw log.failure("nginx did not listen on \(listen): see \(cache)/error.log") }
            log.progress("\(who): nginx on \(listen) in front of the server on \(server.port)")

            let firstVersion = head + 2
            let lastVersion = firstVersion + Self.commitCount - 1
            let pool = HTTPFollowerPool(
                count: followers, port: listen, list: Self.listName, since: head, firstVersion: firstVersion, lastVersion: lastVersion,
                tokens: Array(tokens.prefix(followers)))
            let thread = Thread { pool.run() }
            thread.start()
            var returnedAt = [Int64]()
            var before = 0.0, after = 0.0
            let committed = Result { () throws -> Void in
                try HTTPFollowersScenario.waitFor("every follower waiting", pool, timeoutSeconds: 180, scenario: Self.name) { $0.waitingSince >= head }
                let warmUp = try commit()
                try HTTPFollowersScenario.waitFor("the warm-up commit", pool, timeoutSeconds: 120, scenario: Self.name) {
                    $0.seen >= warmUp && $0.waitingSince >= warmUp
                }
                before = Self.originRequests(port: server.port)
                log.progress("\(who): every follower had the warm-up commit; \(Self.commitCount) commits, \(Self.spacingMs) ms apart")
                var start = MonotonicClock.nanoseconds() + 200_000_000
                for _ in 0..<Self.commitCount {
                    MonotonicClock.sleep(until: start)
                    _ = try commit()
                    returnedAt.append(MonotonicClock.nanoseconds())
                    start += Int64(Self.spacingMs) * 1_000_000
                }
                try HTTPFollowersScenario.waitFor("every commit at every follower", pool, timeoutSeconds: 60, scenario: Self.name) { $0.seen >= lastVersion }
                after = Self.originRequests(port: server.port)
                log.progress("\(who): the server's requests so far: " + Self.originRequestsByRoute(port: server.port).sorted { $0.key < $1.key }.map { "\($0.key) \(Int($0.value))" }.joined(separator: ", "))
            }
            pool.stop()
            pool.finished.wait()
            let progress = pool.current
            let peak = server.peakMemoryMB()
            if case .failure(let error) = committed { failures.append("\(who): \(error)") }
            let (latencies, _, missing) = HTTPFollowersScenario.latencies(
                pool, followers: followers, span: lastVersion - firstVersion + 1, committedAt: returnedAt)
            if missing > 0 { failures.append("\(who): \(missing) deliveries missing") }
            let origin = (after - before) / Double(Self.commitCount)
            sides.append((latencies, missing, peak, origin, progress.errors))
            log.progress("\(who): p50 \(Format.fixed(LiveDeliveryScenario.percentile(latencies, 50), decimals: 2)) ms, "
                + "p99 \(Format.fixed(LiveDeliveryScenario.percentile(latencies, 99), decimals: 2)) ms; "
                + "\(Format.fixed(origin, decimals: 1)) requests reached the server per commit; server peak \(peak.map { Format.fixed($0, decimals: 1) } ?? "?") MB; "
                + "\(progress.errors) errors" + (progress.errorSamples.isEmpty ? "" : ": " + progress.errorSamples.joined(separator: "; ")))
        }
        let (baseline, ours) = (sides[0], sides[1])
        guard !ours.latencies.isEmpty, !baseline.latencies.isEmpty else { throw log.failure("no deliveries: " + failures.joined(separator: "; ")) }
        let p99 = LiveDeliveryScenario.percentile(ours.latencies, 99)
        if ours.origin > Double(2 * Self.nginxWorkers) {
            failures.append("\(Format.fixed(ours.origin, decimals: 1)) requests reached the server per commit (target ≤ \(2 * Self.nginxWorkers))")
        }
        if let peak = ours.peak, peak > 256 { failures.append("the server's peak \(Format.fixed(peak, decimals: 1)) MB (target ≤ 256)") }
        var details: [String: JSONValue] = [
            "followers": .int(Self.followerCount),
            "commits": .int(Self.commitCount),
            "nginxWorkers": .int(Self.nginxWorkers),
            "p50Ms": .number(LiveDeliveryScenario.percentile(ours.latencies, 50), decimals: 2),
            "p99Ms": .number(p99, decimals: 2),
            "maxMs": .number(ours.latencies.max() ?? 0, decimals: 2),
            "missingDeliveries": .int(ours.missing),
            "errors": .int(ours.errors),
            "originRequestsPerCommit": .number(ours.origin, decimals: 2),
            "baselineP99Ms": .number(LiveDeliveryScenario.percentile(baseline.latencies, 99), decimals: 2),
            "baselineOriginRequestsPerCommit": .number(baseline.origin, decimals: 2),
        ]
        if let mb = ours.peak { details["peakMemoryMB"] = .number(mb, decimals: 1) }
        return ScenarioResult(
            scenario: Self.name, oursMs: p99, baseline: Self.baselineName, baselineMs: LiveDeliveryScenario.percentile(baseline.latencies, 99),
            target: Self.target, details: details, oursRuns: "p99 of \(ours.latencies.count)", baselineRuns: "p99 of \(baseline.latencies.count)",
            failures: failures)
    }

    /// The requests of the journal route and of the access check the server answered so far (its
    /// `liststore_http_requests_total`, read with the service token).
    static func originRequests(port: Int) -> Double {
        originRequestsByRoute(port: port).values.reduce(0, +)
    }

    /// The same, by route.
    static func originRequestsByRoute(port: Int) -> [String: Double] {
        guard let fd = KeepAliveClient.connectLoopback(port: port) else { return [:] }
        defer { close(fd) }
        let request = Array("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer service\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else { return [:] }
        var answer = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            answer += buffer[0..<count]
        }
        var counts = [String: Double]()
        for line in String(decoding: answer, as: UTF8.self).split(separator: "\n")
        where line.hasPrefix("liststore_http_requests_total") && (line.contains("/journal") || line.contains("/v1/access")) {
            if let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) {
                counts[String(line[..<space]), default: 0] += value
            }
        }
        return counts
    }

    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func waitForPort(_ port: Int, seconds: Int64) -> Bool {
        let deadline = MonotonicClock.nanoseconds() + seconds * 1_000_000_000
        while MonotonicClock.nanoseconds() < deadline {
            if let fd = KeepAliveClient.connectLoopback(port: port) {
                close(fd)
                return true
            }
            MonotonicClock.sleep(until: MonotonicClock.nanoseconds() + 50_000_000)
        }
        return false
    }
}
