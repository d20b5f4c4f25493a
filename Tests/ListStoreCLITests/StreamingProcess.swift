import Foundation
import ListStoreTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `liststore` child process whose standard output is read line by line as it comes (for
/// `pull --follow`), and whose standard error is kept.
final class StreamingProcess: @unchecked Sendable {
    // Safe: the process is started in `init` and then only queried; `lines` and `errors` are
    // reached through their locks.
    let process: Process
    private let lines = _Locked([String]())
    private let errors = _Locked(Data())
    private let readers = DispatchGroup()

    /// Starts `liststore arguments…`.
    convenience init(_ arguments: [String]) throws {
        try self.init(executable: CLIRunner.binary, arguments)
    }

    /// Starts `executable arguments…`.
    init(executable: URL, _ arguments: [String]) throws {
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.endsWithTestProcess()
        try process.runWhenDescriptorsAllow()
        read(stdout.fileHandleForReading) { [lines] chunk, pending in
            pending.append(chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                lines.withLock { $0.append(line) }
                pending.removeSubrange(pending.startIndex...newline)
            }
        }
        read(stderr.fileHandleForReading) { [errors] chunk, _ in errors.withLock { $0.append(chunk) } }
    }

    private func read(_ handle: FileHandle, _ consume: @escaping @Sendable (Data, inout Data) -> Void) {
        readers.enter()
        Thread { [readers] in
            var pending = Data()
            while true {
                let chunk = PipeIO.readSome(handle)
                if chunk.isEmpty { break }
                consume(chunk, &pending)
            }
            readers.leave()
        }.start()
    }

    /// The complete lines printed so far.
    var output: [String] { lines.withLock { $0 } }

    /// What the process printed on standard error so far.
    var errorOutput: String { String(decoding: errors.withLock { $0 }, as: UTF8.self) }

    /// The first line (after the first `skip`) that satisfies `predicate`, waiting up to `timeout`
    /// for it.
    func waitForLine(skipping skip: Int = 0, timeout: Duration, where predicate: (String) -> Bool = { _ in true }) -> String? {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        repeat {
            if let line = output.dropFirst(skip).first(where: predicate) { return line }
            usleep(2_000)
        } while clock.now < deadline && process.isRunning
        return output.dropFirst(skip).first(where: predicate)
    }

    /// Sends `signal` to the process.
    func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Waits up to `timeout` for the process to end (and its output to be read); kills it and
    /// returns `false` when it does not.
    func waitForExit(timeout: Duration) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while process.isRunning && clock.now < deadline { usleep(5_000) }
        let exited = !process.isRunning
        if !exited { send(SIGKILL) }
        process.waitUntilExit()
        _ = readers.wait(timeout: .now() + 10)
        return exited
    }
}
