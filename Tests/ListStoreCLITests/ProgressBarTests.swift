import Foundation
import ListStoreTestSupport
import Testing

/// `pull` (of a list, or of a replica set) draws a progress bar on stderr while a resync's pages
/// land, when stderr is a terminal (`script` gives the command one), and prints nothing extra
/// otherwise.
@Suite(.blockingWaits) struct ProgressBarTests {
    @Test func aResyncInPagesDrawsABarOnATerminalAndNothingElsewhere() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { return }  // util-linux's
        let dir = try TemporaryDirectory()
        let source = dir.url.appendingPathComponent("source.liststore").path
        // About 6 MB: a first page of 256 KiB, then two of 4 MiB at most.
        let elements = (0..<60_000).map { #"{"id":"m\#($0)","content":{"title":"Message number \#($0) from someone who writes","n":\#($0)}}"# }
        let file = try dir.file("big.json", #"{"sections":[{"id":"inbox","elements":["# + elements.joined(separator: ",") + "]}]}")
        #expect(try CLIRunner.run(["commit", "--db", source, "--list", "big", "--file", file]).status == 0)
        #expect(try CLIRunner.run(["prune", "--db", source, "--list", "big", "--keep-last", "0"]).status == 0)

        // Not a terminal: the result line on stdout, nothing on stderr.
        let plain = try CLIRunner.run(["pull", "--db", source, "--list", "big", "--replica", dir.url.appendingPathComponent("a.liststore").path])
        #expect(plain.status == 0 && plain.stderr.isEmpty, "\(plain.stderr)")
        #expect(plain.stdout.hasSuffix("resynced by diff (pruned) in 3 pages\n"), "\(plain.stdout)")

        // A terminal: the bar, then the line.
        // (`script` is the command's parent, not this process: it goes without the watch of its parent.)
        let command = ["env", "-u", "LISTSTORE_PARENT_PID", CLIRunner.binary.path, "pull", "--db", source, "--list", "big", "--replica", dir.url.appendingPathComponent("b.liststore").path]
            .map { "'" + $0 + "'" }.joined(separator: " ")
        let terminal = try CLIRunner.run(["-qec", command, "/dev/null"], executable: URL(fileURLWithPath: "/usr/bin/script"))
        #expect(terminal.status == 0, "\(terminal.stderr)")
        #expect(terminal.stdout.contains("liststore: pulling 'big' [####################] 100% 60,000/60,000 elements"), "\(terminal.stdout)")
        #expect(terminal.stdout.contains("resynced by diff (pruned) in 3 pages"))

        // A replica set (`--lists`): each list it copies in pages draws its bar, by name.
        let set = ["env", "-u", "LISTSTORE_PARENT_PID", CLIRunner.binary.path, "pull", "--db", source, "--lists", "**", "--replica", dir.url.appendingPathComponent("c.liststore").path]
            .map { "'" + $0 + "'" }.joined(separator: " ")
        let lists = try CLIRunner.run(["-qec", set, "/dev/null"], executable: URL(fileURLWithPath: "/usr/bin/script"))
        #expect(lists.status == 0, "\(lists.stderr)")
        #expect(lists.stdout.contains("liststore: pulling 'big' [####################] 100% 60,000/60,000 elements"), "\(lists.stdout)")
        let quiet = try CLIRunner.run(["pull", "--db", source, "--lists", "**", "--replica", dir.url.appendingPathComponent("d.liststore").path])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")
    }
}
