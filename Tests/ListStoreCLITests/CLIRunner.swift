import Foundation
import ListStoreTestSupport

/// Runs the built `liststore` binary and captures what it printed.
struct CLIRunner {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The directory holding the built products, next to the test bundle.
    static let binary: URL = {
        let candidates = [
            Bundle.main.bundleURL,
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.allBundles.map(\.bundleURL).first { $0.pathExtension == "xctest" }?.deletingLastPathComponent(),
        ].compactMap { $0 }
        for directory in candidates {
            let url = directory.appendingPathComponent("liststore")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return candidates[0].appendingPathComponent("liststore")
    }()

    /// `run(_:input:)` on a thread of its own, so that a test waiting for the child does not hold
    /// one of the threads that run tasks (in-process servers of other tests need them; on Linux,
    /// dispatch's global queues run on those same threads).
    static func runOffPool(_ arguments: [String], input: Data = Data()) async throws -> Result {
        try await offPool { try run(arguments, input: input) }
    }

    /// Runs `body` on a thread of its own (it blocks on child processes), for the same reason.
    static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Swift.Result { try body() }) }.start()
        }
    }

    /// Runs `liststore arguments…` (or `executable arguments…`) with `input` on standard input.
    static func run(
        _ arguments: [String], input: Data = Data(), environment: [String: String] = [:], executable: URL = binary
    ) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.endsWithTestProcess()
        if !environment.isEmpty {
            process.environment = process.environment?.merging(environment) { _, new in new }
        }
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.runWhenDescriptorsAllow()
        let writer = Thread {
            PipeIO.write(input, to: stdin.fileHandleForWriting)
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        // Read both pipes fully before waiting, so a large output cannot block the child.
        let errorReader = ErrorReader(handle: stderr.fileHandleForReading)
        let out = PipeIO.readAll(stdout.fileHandleForReading)
        let err = errorReader.finish()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self))
    }

    /// Reads a pipe to its end on a thread of its own.
    private final class ErrorReader: @unchecked Sendable {
        // Safe: `data` is written once by the reader thread and read only after `done` is signalled.
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)

        init(handle: FileHandle) {
            Thread {
                self.data = PipeIO.readAll(handle)
                self.done.signal()
            }.start()
        }

        func finish() -> Data {
            done.wait()
            return data
        }
    }
}

/// A temporary directory for one test, removed when the test is done with it.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("liststore-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Writes `bytes` to a file called `name` and returns its path.
    func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = url.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func file(_ name: String, _ text: String) throws -> String { try file(name, Array(text.utf8)) }

    deinit { try? FileManager.default.removeItem(at: url) }
}

extension CLIRunner {
    /// Starts `liststore arguments…` with output discarded, without waiting for it.
    static func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.endsWithTestProcess()
        try process.runWhenDescriptorsAllow()
        return process
    }
}
