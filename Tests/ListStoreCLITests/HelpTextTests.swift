import Foundation
import ListDiffTestSupport
import Testing

/// Every command's help, as `liststore help COMMAND` prints it: prose without the escapes of its
/// source (a `\` that was meant to join lines, a `\(…)` that was meant to be interpolated).
@Suite(.blockingWaits) struct HelpTextTests {
    static let commands = [
        "commit", "show", "log", "lists", "verify", "diff", "pull", "push", "sync", "status", "prune", "consumers", "drop",
        "advance-epoch", "serve", "demo",
    ]

    @Test(arguments: commands) func helpHoldsNoEscapesOfItsSource(_ command: String) throws {
        let help = try CLIRunner.run(["help", command])
        #expect(help.status == 0, "\(help.stderr)")
        // `serve` runs liststore-server, whose exit codes its own help lists.
        let words = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        if command != "serve" { #expect(words.contains("Exit codes: 0 ok"), "\(command): \(help.stdout)") }
        let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        for line in lines {
            #expect(!line.hasSuffix("\\") && !line.hasSuffix("\\ "), "\(command): a line ends with '\\': \(line)")
            #expect(!line.contains("\\("), "\(command): \(line)")
        }
    }
}
