#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes to the standard streams through their file descriptors.
enum Terminal {
    /// Writes `text` to standard output.
    static func out(_ text: String) { write(text, to: 1) }

    /// Writes `bytes` to standard output as they are.
    /// - Throws: `CommandFailure` 74 when standard output cannot take them (a closed pipe, a full disk).
    static func outBytes(_ bytes: [UInt8]) throws {
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { buffer in
                #if canImport(Darwin)
                Darwin.write(1, buffer.baseAddress, buffer.count)
                #elseif canImport(Glibc)
                Glibc.write(1, buffer.baseAddress, buffer.count)
                #else
                Musl.write(1, buffer.baseAddress, buffer.count)
                #endif
            }
            if count > 0 {
                written += count
            } else if count < 0, errno != EINTR {
                throw CommandFailure("cannot write to stdout: \(String(cString: strerror(errno)))", status: ExitStatus.ioError)
            }
        }
    }

    /// Writes one line, prefixed with the program name, to standard error; control characters in
    /// it (a name or a server's message holding a line break or an escape sequence) are escaped.
    static func errorLine(_ line: String) { write("liststore: " + Output.printable(line) + "\n", to: 2) }

    /// Whether standard error is a terminal (progress is shown only then).
    static var showsProgress: Bool { isatty(2) != 0 }

    /// Shows `line` as progress on standard error when it is a terminal, replacing the previous
    /// progress line; `nil` clears it.
    static func progress(_ line: String?) {
        guard showsProgress else { return }
        write("\r\u{1B}[K" + (line.map { "liststore: " + Output.printable($0) } ?? ""), to: 2)
    }

    /// Runs a command body; a `CommandFailure` becomes one line on stderr and its exit code.
    static func reportingFailures(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let failure as CommandFailure {
            errorLine("error: " + failure.message)
            throw failure.status
        }
    }

    private static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                #if canImport(Darwin)
                let written = Darwin.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                #elseif canImport(Glibc)
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                #else
                let written = Musl.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                #endif
                if written < 0 {
                    if errno == EINTR { continue }
                    return  // stdout closed (e.g. a pipe to `head`): nothing more to say
                }
                offset += written
            }
        }
    }
}
