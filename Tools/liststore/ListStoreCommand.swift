import ArgumentParser

#if canImport(Glibc)
import Glibc
private func exitProcess(_ code: Int32) -> Never { Glibc.exit(code) }
#elseif canImport(Musl)
import Musl
private func exitProcess(_ code: Int32) -> Never { Musl.exit(code) }
#elseif canImport(Darwin)
import Darwin
private func exitProcess(_ code: Int32) -> Never { Darwin.exit(code) }
#endif

/// Ends the process with `code`, after closing the stores the command opened.
private func terminate(_ code: Int32) async -> Never {
    await OpenStores.closeAll()
    exitProcess(code)
}

/// `liststore`: commit, inspect, verify, pull, push, sync and serve ordered, sectioned lists.
@main
struct ListStoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "liststore",
        abstract: "Ordered, sectioned lists with a journal of staged changesets.",
        discussion: ExitStatus.helpText,
        version: "0.1.0",
        subcommands: [
            CommitCommand.self, ShowCommand.self, LogCommand.self, ListsCommand.self, VerifyCommand.self,
            DiffCommand.self, PullCommand.self, PushCommand.self, SyncCommand.self, StatusCommand.self, PruneCommand.self,
            ConsumersCommand.self, BlobCommand.self, DropCommand.self, AdvanceEpochCommand.self, ServeCommand.self, DemoCommand.self,
        ]
    )

    /// Runs the command; every error is one line on stderr with its documented exit code, and help
    /// and version go to stdout.
    static func main() async {
        do {
            try ParentWatch.start()
        } catch {
            Terminal.errorLine("error: " + error.message)
            await terminate(error.status)
        }
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
            await OpenStores.closeAll()
        } catch let status as ExitCode {
            await terminate(status.rawValue)  // the failure was already reported
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                Terminal.out(fullMessage(for: error) + "\n")
            } else {
                Terminal.errorLine("error: " + message(for: error).split(separator: "\n").joined(separator: "; ")
                    + " (see 'liststore help')")
            }
            await terminate(code.rawValue)
        }
    }
}
