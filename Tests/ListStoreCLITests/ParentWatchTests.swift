import Foundation
import ListDiffTestSupport
import ListStore
import ListStoreTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `LISTSTORE_PARENT_PID`: `liststore` and `liststore-server` end with the process that started
/// them, however it ends, so that a killed test run leaves no child behind.
@Suite(.blockingWaits) struct ParentWatchTests {
    static let server = CLIRunner.binary.deletingLastPathComponent().appendingPathComponent("liststore-server")

    /// A shell starts `liststore serve` (which becomes `liststore-server`) and `liststore pull
    /// --follow`, each told the shell's pid, and is killed with SIGKILL once both run: both end.
    @Test func childrenEndWhenTheProcessThatStartedThemIsKilled() throws {
        let dir = try TemporaryDirectory()
        let db = dir.url.appendingPathComponent("s.liststore").path
        let replica = dir.url.appendingPathComponent("r.liststore").path
        try Store(path: db).commit(linearList(3), to: "l")
        // In the background, so that the shell stays their parent (it would exec a last command).
        let script = """
            export LISTSTORE_PARENT_PID=$$
            "$0" serve --db "$1" --port 0 &
            echo "server $!"
            "$0" pull --db "$1" --list l --replica "$2" --follow &
            echo "follower $!"
            wait
            """
        let shell = try StreamingProcess(executable: URL(fileURLWithPath: "/bin/sh"), ["-c", script, CLIRunner.binary.path, db, replica])
        defer { if shell.process.isRunning { shell.send(SIGKILL) } }
        func pid(_ name: String) -> pid_t? {
            shell.waitForLine(timeout: .seconds(60)) { $0.hasPrefix(name + " ") }.flatMap { pid_t($0.dropFirst(name.count + 1)) }
        }
        let children = try [("server", #require(pid("server"))), ("follower", #require(pid("follower")))]
        defer {
            for (_, child) in children { kill(child, SIGKILL) }  // only if a check below failed
        }
        // Both run (past their start), and watch the shell.
        let serving = shell.waitForLine(timeout: .seconds(60)) { $0.contains("serving") }
        let pulled = shell.waitForLine(timeout: .seconds(60)) { $0.contains("at source version 1") }
        try #require(serving != nil && pulled != nil, "\(shell.output) \(shell.errorOutput)")

        shell.send(SIGKILL)
        shell.process.waitUntilExit()
        for (name, child) in children {
            #expect(ProcessExit.wait(for: child, timeout: .seconds(60)), "the \(name) (pid \(child)) outlived the shell that started it")
        }
    }

    /// A process whose parent is not the one the variable names exits at once (1), and a variable
    /// that is not a process id is refused (64); with the right pid the command runs.
    @Test func theVariableIsCheckedAtStart() throws {
        let dir = try TemporaryDirectory()
        let db = dir.url.appendingPathComponent("s.liststore").path
        try Store(path: db).commit(linearList(3), to: "l")
        for executable in [CLIRunner.binary, Self.server] {
            let arguments = executable == CLIRunner.binary ? ["lists", "--db", db] : ["--db", db, "--port", "0"]
            let orphan = try CLIRunner.run(arguments, environment: ["LISTSTORE_PARENT_PID": "1"], executable: executable)
            #expect(orphan.status == 1, "\(executable.lastPathComponent): \(orphan.stderr)")
            #expect(orphan.stderr.contains("no longer this process's parent") && orphan.stdout.isEmpty, "\(orphan.stderr)")
            let bad = try CLIRunner.run(arguments, environment: ["LISTSTORE_PARENT_PID": "me"], executable: executable)
            #expect(bad.status == 64 && bad.stderr.contains("LISTSTORE_PARENT_PID"), "\(executable.lastPathComponent): \(bad.stderr)")
        }
        let lists = try CLIRunner.run(["lists", "--db", db], environment: ["LISTSTORE_PARENT_PID": String(getpid())])
        #expect(lists.status == 0 && lists.stdout.contains("l"), "\(lists.stderr)")
    }
}
