#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The PostgreSQL server of the pg scenarios: the database `LISTSTORE_BENCH_PG` names, or else a
/// throwaway cluster of this run, started by `Tools/throwaway-postgres` (which installs Debian's
/// `postgresql` when it is missing, as for the tests) and stopped when the benchmark ends.
enum PostgresServer {
    static let variable = "LISTSTORE_BENCH_PG"

    /// The database URL (in a scenario's child process, the parent set it).
    /// - Throws: `PostgresServerError` when `LISTSTORE_BENCH_PG` is not set.
    static func url() throws -> String {
        guard let url = ProcessInfo.processInfo.environment[variable], !url.isEmpty else {
            throw PostgresServerError(message: "\(variable) is not set and no throwaway cluster was started")
        }
        return url
    }

    /// The state file of the cluster this run started, if any (for `stop` at exit).
    nonisolated(unsafe) private static var startedState: String?

    /// When `LISTSTORE_BENCH_PG` is not set: starts a throwaway cluster with a state file of its own
    /// (a developer's own cluster is left alone), sets the variable for the scenarios' child
    /// processes, and stops the cluster when this process exits. Called once, by the parent, before
    /// any scenario runs.
    /// - Throws: `PostgresServerError` when the cluster does not start (its diagnostics included).
    static func startThrowawayUnlessNamed() throws {
        if let url = ProcessInfo.processInfo.environment[variable], !url.isEmpty { return }
        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Tools/throwaway-postgres").path
        guard FileManager.default.isExecutableFile(atPath: script) else {
            throw PostgresServerError(message: "\(variable) is not set, and \(script) is not there to start a cluster")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("liststore-bench-pg-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let state = directory + "/state"
        let (out, err) = (directory + "/url", directory + "/stderr")
        StandardError.line("liststore-bench: \(variable) is not set; starting a throwaway PostgreSQL cluster (Tools/throwaway-postgres)")
        let status = run(script, "start", state: state, stdout: out, stderr: err)
        let url = (try? String(contentsOfFile: out, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        guard status == 0, url.hasPrefix("postgres://") else {
            let diagnostics = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
            throw PostgresServerError(message: "the throwaway cluster did not start (status \(status)): \(diagnostics)")
        }
        setenv(variable, url, 1)
        startedState = state
        atexit {
            guard let state = PostgresServer.startedState else { return }
            let script = URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Tools/throwaway-postgres").path
            _ = PostgresServer.run(script, "stop", state: state, stdout: "/dev/null", stderr: "/dev/null")
            try? FileManager.default.removeItem(atPath: (state as NSString).deletingLastPathComponent)
        }
    }

    /// Runs `script command` with its state file, its output in files (no pipes: the server it
    /// starts outlives it), and waits for it; returns its exit status (-1 when it cannot run).
    fileprivate static func run(_ script: String, _ command: String, state: String, stdout: String, stderr: String) -> Int32 {
        let shell = "exec \"$0\" \"$1\" >\"$2\" 2>\"$3\" </dev/null"
        var environment = ProcessInfo.processInfo.environment
        environment["THROWAWAY_POSTGRES_STATE"] = state
        let words: [String] = ["/bin/sh", "-c", shell, script, command, stdout, stderr]
        let pairs: [String] = environment.map { "\($0.key)=\($0.value)" }
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = pairs.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid = pid_t()
        guard posix_spawn(&pid, "/bin/sh", nil, nil, argv, envp) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return -1 }
        }
        // WIFEXITED / WEXITSTATUS.
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
    }
}

struct PostgresServerError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
