import Foundation

/// The PostgreSQL server of the pg scenarios: `LISTSTORE_BENCH_PG` when it is set, otherwise a
/// throwaway cluster started with `Tools/throwaway-postgres` (as the tests do) and stopped at exit.
enum PostgresServer {
    /// The database URL, starting a throwaway cluster the first time one is needed.
    static func url() throws -> String {
        try lock.withLock {
            if let url = started { return url }
            if let url = ProcessInfo.processInfo.environment["LISTSTORE_BENCH_PG"], !url.isEmpty {
                started = url
                return url
            }
            let url = try throwaway(["start"]).trimmingCharacters(in: .whitespacesAndNewlines)
            guard url.hasPrefix("postgres://") else { throw PostgresServerError(message: "throwaway-postgres printed \(url)") }
            atexit { _ = try? PostgresServer.throwaway(["stop"]) }
            started = url
            return url
        }
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var started: String?  // only used under `lock`

    /// The script, found from this source file: Tools/Benchmarks/Sources/liststore-bench/ → Tools/.
    private static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("throwaway-postgres")

    /// Runs the script with `arguments` and a state file of this process; returns what it printed.
    private static func throwaway(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = script
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["THROWAWAY_POSTGRES_STATE"] = "/tmp/liststore-bench-postgres.\(ProcessInfo.processInfo.processIdentifier)"
        process.environment = environment
        // A file, not a pipe: the server the script starts may inherit the descriptor, and a pipe
        // would then never reach its end.
        let outputPath = NSTemporaryDirectory() + "liststore-bench-postgres-\(UUID().uuidString).out"
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
            let output = FileHandle(forWritingAtPath: outputPath)
        else { throw PostgresServerError(message: "cannot create \(outputPath)") }
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        process.standardOutput = output
        try process.run()
        process.waitUntilExit()
        try? output.close()
        let data = FileManager.default.contents(atPath: outputPath) ?? Data()
        guard process.terminationStatus == 0 else {
            throw PostgresServerError(message: "\(script.path) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}

struct PostgresServerError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
