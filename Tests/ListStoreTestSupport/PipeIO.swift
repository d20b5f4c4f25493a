import Foundation

#if canImport(Glibc)
import Glibc
private let systemRead: @Sendable (Int32, UnsafeMutableRawPointer?, Int) -> Int = Glibc.read
private let systemWrite: @Sendable (Int32, UnsafeRawPointer?, Int) -> Int = Glibc.write
#elseif canImport(Musl)
import Musl
private let systemRead: @Sendable (Int32, UnsafeMutableRawPointer?, Int) -> Int = Musl.read
private let systemWrite: @Sendable (Int32, UnsafeRawPointer?, Int) -> Int = Musl.write
#elseif canImport(Darwin)
import Darwin
private let systemRead: @Sendable (Int32, UnsafeMutableRawPointer?, Int) -> Int = Darwin.read
private let systemWrite: @Sendable (Int32, UnsafeRawPointer?, Int) -> Int = Darwin.write
#endif

/// Reads and writes of child processes' pipes for the tests, on read(2) and write(2): retried when a
/// signal interrupts them, and ending (not stopping the test process) on an error. On Linux,
/// Foundation's `FileHandle.availableData`, `readDataToEndOfFile()` and `write(_:)` call
/// `fatalError` on any failed call, an interrupted one included.
public enum PipeIO {
    /// The bytes available now, waiting for some; empty at the end of the pipe or on an error.
    public static func readSome(_ handle: FileHandle) -> Data {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(handle.fileDescriptor, $0.baseAddress, $0.count) }
            if count >= 0 { return Data(chunk[0..<count]) }
            if errno != EINTR { return Data() }
        }
    }

    /// Everything up to the end of the pipe (or up to an error).
    public static func readAll(_ handle: FileHandle) -> Data {
        var data = Data()
        while true {
            let chunk = readSome(handle)
            if chunk.isEmpty { return data }
            data.append(chunk)
        }
    }

    /// Writes all of `data`; stops quietly when the reader has gone (the caller learns that from
    /// the process's answer).
    public static func write(_ data: Data, to handle: FileHandle) {
        var bytes = [UInt8](data)
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeMutableBytes { systemWrite(handle.fileDescriptor, $0.baseAddress! + sent, $0.count - sent) }
            if count > 0 {
                sent += count
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}
