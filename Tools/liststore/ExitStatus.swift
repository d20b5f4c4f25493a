import ArgumentParser

/// The exit codes of `liststore` (sysexits.h values), documented in `--help` and Docs/CommandLine.md.
enum ExitStatus {
    /// Success.
    static let ok = ExitCode(0)
    /// Any other failure.
    static let failure = ExitCode(1)
    /// Wrong usage: unknown option, missing argument, bad value.
    static let usage = ExitCode(64)
    /// The input data is invalid: malformed or non-UTF-8 JSON, wrong types, missing ids, absurd nesting.
    static let invalidData = ExitCode(65)
    /// An input file is missing, unreadable or a directory.
    static let missingInput = ExitCode(66)
    /// An I/O error or a damaged store.
    static let ioError = ExitCode(74)
    /// A version conflict: another writer got there first; retry.
    static let conflict = ExitCode(75)
    /// The server refused the token (wrong or missing `--token`).
    static let unauthorized = ExitCode(77)

    static let helpText = """
        Exit codes: 0 ok; 1 failure; 64 usage; 65 invalid input data; 66 missing input file; \
        74 I/O error, damaged store or unreachable server; 75 version conflict or local upload given up (retry); 77 token \
        refused by the server.
        """
}

/// A failure that `liststore` reports as one line on stderr with a documented exit code.
struct CommandFailure: Error, CustomStringConvertible {
    var message: String
    var status: ExitCode

    init(_ message: String, status: ExitCode) {
        self.message = message
        self.status = status
    }

    var description: String { message }
}
