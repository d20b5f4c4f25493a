import ArgumentParser
import ListJSON
import ListStore
import ListStoreWire

/// `liststore commit --db D --list L --file F|- [--expect-version V] [--author A] [--message M] [--json]`.
struct CommitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "commit",
        abstract: "Diff a snapshot document against a list's head and record a new version.",
        discussion: """
            The file holds a snapshot document {"sections":[…]} (as 'show --json' prints it). A \
            snapshot equal to the head records nothing. With --expect-version, the commit happens only \
            if the head is still that version (0 for a new list); otherwise it exits with 75. --json \
            prints {"schemaVersion":1,"list":…,"version":…,"parentVersion":…,"changed":…,"stages":…,\
            "changes":…,"digest":…,"rowsWritten":…}.

            A commit to a replica list (one made by 'liststore pull') is a local change: \
            it is committed at once and queued in the replica's outbox, pending until 'liststore \
            push' or 'liststore sync' sends it to the source. The summary then says 'pending: local \
            change 3 of list 'inbox', not pushed yet; 'liststore push' or 'sync' sends it', and \
            --json adds "pending": 3 (the change's sequence number; absent for other commits).

            \(ExitStatus.helpText)
            """
    )

    @OptionGroup var store: StoreOptions
    @OptionGroup var list: ListOption

    @Option(name: .long, help: ArgumentHelp("The snapshot document ('-' for standard input).", valueName: "file"))
    var file: String

    @Option(name: .long, help: ArgumentHelp("Commit only if the head is this version.", valueName: "version"))
    var expectVersion: Int?

    @Option(name: .long, help: ArgumentHelp("Who commits (recorded in the journal).", valueName: "name"))
    var author: String?

    @Option(name: .long, help: ArgumentHelp("Why (recorded in the journal).", valueName: "text"))
    var message: String?

    @Flag(name: .long, help: "Print one JSON document instead of a summary.")
    var json = false

    func validate() throws {
        if let expectVersion, expectVersion < 0 { throw ValidationError("--expect-version must be 0 or more") }
    }

    func run() async throws {
        try await Terminal.reportingFailures {
            let sections: [ListSection] = try SnapshotFile.load(file)
            let elementCount = sections.reduce(0) { $0 + $1.elements.count }
            let store = try await store.engine(existing: false)
            let (name, expectVersion, author, message) = (list.list, expectVersion, author, message)
            let before = json ? nil : try? await store.call { try await $0.snapshot(of: name, at: nil) }
            if elementCount >= 100_000 { Terminal.progress("committing \(elementCount) elements to \(Output.quoted(list.list))…") }
            let result = try await store.call {
                try await $0.commit(sections, to: name, expectedVersion: expectVersion, author: author, message: message)
            }
            if elementCount >= 100_000 { Terminal.progress(nil) }
            if json {
                Terminal.out(String(decoding: WireDocument.commit(result), as: UTF8.self) + "\n")
                return
            }
            guard result.changed else {
                Terminal.out("\(Output.quoted(result.list)): no changes; version \(result.version) stays the head.\n")
                return
            }
            Terminal.out(
                "\(Output.quoted(result.list)): version \(result.version) (parent \(result.parentVersion)), digest \(Output.short(result.digest)), \(result.rowsWritten) rows written\n")
            if let seq = result.pendingSeq {
                Terminal.out(
                    "pending: local change \(seq) of list \(Output.quoted(result.list)), not pushed yet; 'liststore push' or 'sync' sends it\n")
            }
            let source = before.flatMap { $0.version == result.parentVersion ? $0.sections : nil } ?? (result.parentVersion == 0 ? [] : nil)
            if let source {
                Terminal.out(try StageSummary(changeset: result.changeset, source: source).text)
            } else {
                Terminal.out("\(StageSummary.plural(result.stageCount, "stage")), \(StageSummary.describe(result.changeset.counts))\n")
            }
        }
    }
}
