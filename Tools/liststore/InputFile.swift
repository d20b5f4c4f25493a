import Foundation

#if canImport(Glibc)
import Glibc
private let systemRead: @Sendable (Int32, UnsafeMutableRawPointer?, Int) -> Int = Glibc.read
#elseif canImport(Musl)
import Musl
private let systemRead: @Sendable (Int32, UnsafeMutableRawPointer?, Int) -> Int = Musl.read
#elseif canImport(Darwin)
import Darwin
private let systemRead: @Sendable (Int32, UnsafeMutableRawPointer?, Int) -> Int = Darwin.read
#endif

/// Reads an input file (or standard input for `-`) with the documented failures.
enum InputFile {
    /// The bytes of `path`; `-` reads standard input.
    ///
    /// - Throws: `CommandFailure` with exit code 66 when the file is missing, a directory or unreadable
    ///   (standard input too).
    static func read(_ path: String) throws -> [UInt8] {
        if path == "-" { return try readStandardInput() }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CommandFailure("cannot open \(Output.quoted(path)): no such file", status: ExitStatus.missingInput)
        }
        guard !isDirectory.boolValue else {
            throw CommandFailure("cannot read \(Output.quoted(path)): it is a directory", status: ExitStatus.missingInput)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure("cannot read \(Output.quoted(path)): permission denied or unreadable", status: ExitStatus.missingInput)
        }
        return [UInt8](data)
    }

    /// All of standard input, read with read(2), which is retried when a signal interrupts it.
    /// (Foundation's `FileHandle` reads stop the process on a read error.)
    /// - Throws: `CommandFailure` with exit code 66 when it cannot be read.
    private static func readStandardInput() throws -> [UInt8] {
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes.append(contentsOf: chunk[0..<count])
            } else if count == 0 {
                return bytes
            } else if errno != EINTR {
                let reason = String(cString: strerror(errno))
                throw CommandFailure("cannot read standard input: \(reason)", status: ExitStatus.missingInput)
            }
        }
    }
}
