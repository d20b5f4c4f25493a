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
import ListSync

/// blob-transfer (Docs/Benchmarks.md): 13 files of 1 KiB to 64 MiB (194.6 MiB, 204 MB) uploaded to
/// a list as blobs and downloaded again over HTTP, against curl putting the same files on nginx's
/// WebDAV and getting them back, on this machine.
///
/// The files are written first (untimed). The server is a `JournalServer` of a SQLite store in a
/// process of its own (http-followers' server mode). Ours, in a client process of its own
/// (`--blob-transfer-client`), does what `liststore blob put` and `blob get --from` do: each file
/// read a MiB at a time to hash it (a content's reference needs the hash), then read again and
/// uploaded with `HTTPSource.storeBlob` (one PUT whose body streams), then downloaded with
/// `HTTPSource.readBlob` (GETs of 4 MiB ranges) into a new file, hashed as it comes to check it. The
/// baseline, in a process of its own (`--blob-transfer-baseline`): one `curl -T` putting the files
/// on nginx (`dav_methods PUT`, one worker, no access log), then one `curl` getting them into new
/// files. Each run of ours uploads to a new list (the list before it is deleted, and its blobs with
/// it), so every run writes every byte. Details: `clientPeakMB` (ours) and `serverPeakMB` (the
/// journal server's), target ≤ 64 each; `uploadMs` and `downloadMs` (ours).
struct BlobTransferScenario {
    static let name = "blob-transfer"
    static let baselineName = "curl PUT and GET of the same files on nginx"
    static let target = Target(minRatio: 0.5)
    static let sizes = [1 << 10, 10 << 10, 100 << 10, 500 << 10, 1 << 20, 2 << 20, 3 << 20, 4 << 20, 8 << 20, 16 << 20, 32 << 20, 64 << 20, 64 << 20]
    static let clientFlag = "--blob-transfer-client"
    static let baselineFlag = "--blob-transfer-baseline"
    static let runs = Int(ProcessInfo.processInfo.environment["LISTSTORE_BENCH_RUNS"] ?? "") ?? 3
    /// The memory target of each side.
    static let maxPeakMB = 64.0

    static var scenario: Scenario {
        Scenario(
            name: name, summary: "204 MB of blobs (1 KiB to 64 MiB) uploaded then downloaded over HTTP vs \(baselineName)", target: target
        ) { () throws(ScenarioFailure) in try BlobTransferScenario().run() }
    }

    let log = ScenarioLog(scenario: name)

    func run() throws(ScenarioFailure) -> ScenarioResult {
        guard let nginx = CachedFollowersScenario.nginx() else { throw log.failure("no nginx (apt-get install nginx)") }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") else { throw log.failure("no /usr/bin/curl (apt-get install curl)") }
        let directory = try log.attempt("creating a temporary directory") { try TemporaryDirectory(label: Self.name) }
        defer { directory.remove() }
        let files = directory.file("files")
        log.progress("writing \(Self.sizes.count) files of \(Self.sizes.reduce(0, +) >> 20) MiB (untimed)")
        try log.attempt("writing the files") {
            try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: false)
            for (k, size) in Self.sizes.enumerated() { try Self.writeFile(files + "/f\(k)", size: size, seed: UInt64(k + 1)) }
        }
        let storePath = directory.file("server.liststore")
        let server = try log.attempt("starting the server") { try HTTPFollowersScenario.ServerProcess(path: storePath) }
        defer { _ = server.stop(timeout: .seconds(10)) }
        let url = "http://127.0.0.1:\(server.port)"

        var (ours, up, down, clientPeak, failures) = ([Double](), [Double](), [Double](), [Double](), [String]())
        for run in 0..<Self.runs {
            let list = "files\(run)"
            try log.attempt("making list \(list)") {
                try runBlocking {
                    let store = try Store(path: storePath)
                    if run > 0 { _ = try await store.deleteList("files\(run - 1)") }
                    _ = try await store.commit([ListSection(model: ListItem(id: "s"), elements: [])], to: list)
                }
            }
            log.progress("ours: run \(run + 1) of \(Self.runs)")
            let out = directory.file("ours\(run)")
            let report = try log.attempt("the client") { try FirstSyncScenario.child([Self.clientFlag, url, list, files, out]) }
            log.progress("ours: " + report.sorted { $0.key < $1.key }.map { "\($0.key) \(Format.fixed($0.value, decimals: 1))" }.joined(separator: ", "))
            (ours, up, down, clientPeak) = (ours + [report["ms"] ?? .nan], up + [report["up"] ?? .nan], down + [report["down"] ?? .nan], clientPeak + [report["peak"] ?? .nan])
            if report["ok"] != 1 { failures.append("WRONG BYTES: run \(run + 1) did not read back what it wrote") }
            try? FileManager.default.removeItem(atPath: out)
        }
        let serverPeak = server.peakMemoryMB() ?? .nan

        var baseline = [Double]()
        let web = directory.file("nginx")
        let proxy = try log.attempt("starting nginx") { try Self.startNginx(nginx, in: web) }
        defer {
            proxy.process.terminate()
            proxy.process.waitUntilExit()
        }
        for run in 0..<Self.runs {
            log.progress("baseline: run \(run + 1) of \(Self.runs)")
            let out = directory.file("curl\(run)")
            let report = try log.attempt("the baseline") {
                try FirstSyncScenario.child([Self.baselineFlag, "http://127.0.0.1:\(proxy.port)/run\(run)/", files, out])
            }
            log.progress("baseline: " + report.sorted { $0.key < $1.key }.map { "\($0.key) \(Format.fixed($0.value, decimals: 1))" }.joined(separator: ", "))
            baseline.append(report["ms"] ?? .nan)
            try? FileManager.default.removeItem(atPath: out)
            try? FileManager.default.removeItem(atPath: web + "/www/run\(run)")
        }

        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? .nan : sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        let (clientPeakMB, bytes) = (median(clientPeak), Self.sizes.reduce(0, +))
        if clientPeakMB > Self.maxPeakMB || serverPeak > Self.maxPeakMB {
            failures.append("MEMORY: the client peaked at \(Format.fixed(clientPeakMB, decimals: 1)) MB, the server at \(Format.fixed(serverPeak, decimals: 1)) MB (target ≤ 64 each)")
        }
        let details: [String: JSONValue] = [
            "clientPeakMB": .number(clientPeakMB, decimals: 1),
            "serverPeakMB": .number(serverPeak, decimals: 1),
            "uploadMs": .number(median(up), decimals: 1),
            "downloadMs": .number(median(down), decimals: 1),
            "MBps": .number(Double(2 * bytes) / 1e3 / median(ours), decimals: 1),
            "bytes": .int(bytes),
        ]
        return ScenarioResult(
            scenario: Self.name, oursMs: median(ours), baseline: Self.baselineName, baselineMs: median(baseline), target: Self.target,
            details: details, oursRuns: "\(ours.count)", baselineRuns: "\(baseline.count)", failures: failures)
    }

    /// Writes `size` bytes of `seed`'s generator to `path`, a MiB at a time.
    static func writeFile(_ path: String, size: Int, seed: UInt64) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw ScenarioFailure(scenario: name, message: "cannot create \(path)")
        }
        defer { try? handle.close() }
        var generator = SplitMix64(seed: seed)
        var written = 0
        while written < size {
            let count = min(1 << 20, size - written)
            let words = (0..<(count + 7) / 8).map { _ in generator.next() }
            try handle.write(contentsOf: words.withUnsafeBytes { Data($0.prefix(count)) })
            written += count
        }
    }

    /// nginx serving `directory/www` with WebDAV's PUT, in the foreground; and its port.
    static func startNginx(_ nginx: String, in directory: String) throws -> (process: Process, port: Int) {
        for sub in ["", "/www", "/tmp", "/logs"] { try FileManager.default.createDirectory(atPath: directory + sub, withIntermediateDirectories: true) }
        let port = CachedFollowersScenario.freePort()
        // As root, nginx's worker would run as nobody, who may not write the temporary directory.
        let user = geteuid() == 0 ? "user root;" : ""
        let config = """
            \(user)
            worker_processes 1;
            daemon off;
            error_log \(directory)/logs/error.log error;
            pid \(directory)/nginx.pid;
            events { worker_connections 64; }
            http {
                access_log off;
                client_body_temp_path \(directory)/tmp;
                client_max_body_size 0;
                sendfile on;
                server {
                    listen 127.0.0.1:\(port);
                    root \(directory)/www;
                    location / { dav_methods PUT; create_full_put_path on; }
                }
            }
            """
        try config.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: nginx)
        process.arguments = ["-p", directory, "-c", directory + "/nginx.conf"]
        process.standardError = FileHandle.nullDevice
        try process.run()
        if CachedFollowersScenario.waitForPort(port, seconds: 30) { return (process, port) }
        process.terminate()
        throw ScenarioFailure(scenario: name, message: "nginx did not start (see \(directory)/logs/error.log)")
    }

    // MARK: - The client processes

    /// Runs a client when the arguments ask for one; returns its exit status, or nil.
    static func clientMain(_ arguments: [String]) -> Int32? {
        if arguments.count == 6, arguments[1] == clientFlag {
            return report { try await transfer(url: arguments[2], list: arguments[3], files: arguments[4], out: arguments[5]) }
        }
        if arguments.count == 5, arguments[1] == baselineFlag {
            return report { try curl(url: arguments[2], files: arguments[3], out: arguments[4]) }
        }
        return nil
    }

    private static func report(_ body: @escaping @Sendable () async throws -> String) -> Int32 {
        do {
            let line = try runBlocking { try await body() }
            LiveDeliveryScenario.writeOut(line + "\n")
            return 0
        } catch {
            StandardError.line("\(name): the client failed: \(error)")
            return 1
        }
    }

    /// A file's bytes, a MiB at a time, each read when it is asked for.
    struct FilePieces: AsyncSequence, Sendable {
        typealias Element = [UInt8]
        let path: String
        struct AsyncIterator: AsyncIteratorProtocol {
            let handle: FileHandle?
            mutating func next() async throws -> [UInt8]? {
                guard let data = try handle?.read(upToCount: 1 << 20), !data.isEmpty else {
                    try handle?.close()
                    return nil
                }
                return [UInt8](data)
            }
        }
        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(handle: FileHandle(forReadingAtPath: path)) }
    }

    /// Ours: every file hashed, uploaded, then every blob downloaded into `out` and checked.
    static func transfer(url: String, list: String, files: String, out: String) async throws -> String {
        let source = try HTTPSource(url)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        let clock = ContinuousClock()
        let start = clock.now
        var references = [BlobReference]()
        for k in sizes.indices {
            let path = files + "/f\(k)"
            var (hasher, size) = (SHA256(), 0)
            for try await piece in FilePieces(path: path) {
                hasher.update(data: piece)
                size += piece.count
            }
            let reference = BlobReference(hash: hasher.finalize().withUnsafeBytes { ContentHash(bytes: $0)! }, size: size)
            let status = try await source.storeBlob(reference, to: list, from: FilePieces(path: path), startingAt: 0)
            guard status.isStored else { throw ScenarioFailure(scenario: name, message: "blob \(k) was not stored") }
            references.append(reference)
        }
        let uploaded = clock.now
        var ok = true
        for (k, reference) in references.enumerated() {
            let path = out + "/f\(k)"
            guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
                throw ScenarioFailure(scenario: name, message: "cannot create \(path)")
            }
            var hasher = SHA256()
            var offset = 0
            while offset < reference.size {
                let piece = try await source.readBlob(reference.hash, of: list, from: offset, maxBytes: 4 << 20)
                guard !piece.isEmpty else { break }
                hasher.update(data: piece)
                try handle.write(contentsOf: piece)
                offset += piece.count
            }
            try handle.close()
            ok = ok && offset == reference.size && hasher.finalize().withUnsafeBytes { ContentHash(bytes: $0)! } == reference.hash
        }
        let end = clock.now
        return "ms=\(Measurement.milliseconds(end - start)) up=\(Measurement.milliseconds(uploaded - start)) down=\(Measurement.milliseconds(end - uploaded)) "
            + "peak=\(PeakMemory.peakMB() ?? .nan) ok=\(ok ? 1 : 0)"
    }

    /// The baseline: one curl putting every file under `url`, one getting them all into `out`.
    static func curl(url: String, files: String, out: String) throws -> String {
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        func run(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            process.arguments = ["-sS", "-f"] + arguments
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw ScenarioFailure(scenario: name, message: "curl ended with \(process.terminationStatus)") }
        }
        let clock = ContinuousClock()
        let start = clock.now
        try run(sizes.indices.flatMap { ["-T", files + "/f\($0)", url + "f\($0)"] })
        let uploaded = clock.now
        try run(sizes.indices.flatMap { [url + "f\($0)", "-o", out + "/f\($0)"] })
        let end = clock.now
        return "ms=\(Measurement.milliseconds(end - start)) up=\(Measurement.milliseconds(uploaded - start)) down=\(Measurement.milliseconds(end - uploaded))"
    }
}
