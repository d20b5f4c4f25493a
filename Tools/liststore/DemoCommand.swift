import ArgumentParser
import Foundation
import ListDiff
import ListJSON
import ListStore

/// `liststore demo [--directory D]`: the main job, end to end, on a small mailbox.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Build a small list over several commits, replay its journal into a replica, compare digests; then edit a replica offline and merge.",
        discussion: """
            Works in --directory (created; it must not hold a store yet) or in a new temporary \
            directory, and leaves the stores there to explore with show, log, diff, status and verify: \
            inbox.liststore (the server's list), replica.liststore (its journal replayed commit by \
            commit) and laptop.liststore (a replica edited offline while the server's list changed \
            too, then synced: the merge and its conflicts are shown).

            \(ExitStatus.helpText)
            """
    )

    @Option(name: .long, help: ArgumentHelp("Where to put the two stores (default: a new temporary directory).", valueName: "path"))
    var directory: String?

    func run() async throws {
        try await Terminal.reportingFailures {
            let folder = try prepareDirectory()
            let sourcePath = folder + "/inbox.liststore"
            let replicaPath = folder + "/replica.liststore"
            let store = try await OpenStores.open(sourcePath)
            Terminal.out("A mailbox list in \(sourcePath), one commit at a time.\n")

            for (title, step) in Self.steps {
                let before = (try? await store.snapshot(of: "inbox").sections) ?? []
                let result = try await StoreFailure.mapping {
                    try await store.edit("inbox", author: "demo", message: title) { draft in try step(&draft) }
                }
                Terminal.out("\n== Version \(result.version): \(title)\n")
                Terminal.out(try StageSummary(changeset: result.changeset, source: before).text)
            }

            let head = try await StoreFailure.mapping { try await store.snapshot(of: "inbox") }
            Terminal.out("\n== The head, version \(head.version)\n")
            for section in head.sections {
                Terminal.out("  \(section.model.id): \(section.elements.map(\.id).joined(separator: ", "))\n")
            }

            // A consumer replays the journal, stage by stage, into a store of its own.
            Terminal.out("\n== Replaying the journal into \(replicaPath)\n")
            let replica = try await OpenStores.open(replicaPath)
            var state: [ListSection] = []
            var rows: [[String]] = []
            var allMatch = true
            let entries = try await StoreFailure.mapping { try await store.journal(of: "inbox", after: 0, limit: 1000).entries }
            for entry in entries {
                let (changeset, next) = try await StoreFailure.mapping { try entry.changeset(applyingTo: state) }
                state = next
                let replayed = try await StoreFailure.mapping { try await replica.commit(state, to: "inbox", expectedVersion: entry.parentVersion) }
                let match = replayed.digest == entry.digest && replayed.version == entry.version
                allMatch = allMatch && match
                rows.append([
                    "\(entry.version)", "\(changeset.count)", Output.short(entry.digest), Output.short(replayed.digest),
                    match ? "yes" : "NO",
                ])
            }
            Terminal.out(Output.table(["version", "stages", "source digest", "replica digest", "match"], rows))
            let verified = try await StoreFailure.mapping {
                let sourceValid = try await store.verify().isValid
                return try await replica.verify().isValid && sourceValid
            }
            Terminal.out(
                allMatch && verified
                    ? "\nEvery digest matches, and both stores verify.\n" : "\nThe replica does not match the source.\n")
            let laptopPath = folder + "/laptop.liststore"
            let merged = try await OfflineDemo(server: store, laptopPath: laptopPath).run()
            Terminal.out("""

                Explore:
                  swift run liststore log --db \(sourcePath) --list inbox
                  swift run liststore show --db \(sourcePath) --list inbox --at 2
                  swift run liststore diff --db \(sourcePath) --list inbox --from-version 1
                  swift run liststore verify --db \(replicaPath)
                  swift run liststore log --db \(laptopPath) --list inbox

                """)
            if !(allMatch && verified) { throw CommandFailure("the replica does not match the source", status: ExitStatus.failure) }
            if !merged { throw CommandFailure("the laptop does not match the server after the sync", status: ExitStatus.failure) }
        }
    }

    private func prepareDirectory() throws -> String {
        let manager = FileManager.default
        guard let directory else {
            let path = manager.temporaryDirectory.appendingPathComponent("liststore-demo-\(UUID().uuidString.prefix(8))").path
            try manager.createDirectory(atPath: path, withIntermediateDirectories: true)
            return path
        }
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw CommandFailure("\(Output.quoted(directory)) is not a directory", status: ExitStatus.usage) }
            for name in ["inbox.liststore", "replica.liststore", "laptop.liststore"] where manager.fileExists(atPath: directory + "/" + name) {
                throw CommandFailure("\(Output.quoted(directory)) already holds \(name); choose a new directory", status: ExitStatus.usage)
            }
        } else {
            do {
                try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw CommandFailure("cannot create \(Output.quoted(directory)): \(error.localizedDescription)", status: ExitStatus.ioError)
            }
        }
        return directory
    }

    // MARK: The story

    private static func message(_ id: String, _ from: String, _ subject: String, unread: Bool = true) -> ListItem {
        ListItem(id: id, json: ["from": .string(from), "subject": .string(subject), "unread": .bool(unread)])
    }

    private static func folder(_ id: String, _ title: String) -> ListItem {
        ListItem(id: id, json: ["title": .string(title)])
    }

    private static let steps: [(String, @Sendable (inout ListDraft<ListItem, ListItem>) throws -> Void)] = [
        ("the first sync", { draft in
            draft.appendSection(folder("today", "Today"), elements: [
                message("m1", "ana", "Lunch?"), message("m2", "bo", "Build is green"),
            ])
            draft.appendSection(folder("yesterday", "Yesterday"), elements: [
                message("m3", "cy", "Contract draft"), message("m4", "dee", "Photos"), message("m5", "ed", "Invoice #311"),
            ])
            draft.appendSection(folder("older", "Older"), elements: [message("m6", "fay", "Welcome!", unread: false)])
        }),
        ("new mail arrives, one message is read", { draft in
            try draft.insert(message("m7", "gus", "Standup moved"), at: ElementPath(section: 0, element: 0))
            try draft.append(message("m8", "ana", "Re: Lunch?"), toSection: "today")
            try draft.reloadElement(message("m2", "bo", "Build is green", unread: false))
        }),
        ("a message moves to another section and one is edited", { draft in
            try draft.moveElement("m3", to: ElementPath(section: 0, element: 1))
            try draft.reloadElement(message("m5", "ed", "Invoice #311 (paid)", unread: false))
        }),
        ("a pinned section appears on top and Older moves above Yesterday", { draft in
            try draft.insertSection(folder("pinned", "Pinned"), at: 0)
            try draft.moveElement("m4", to: ElementPath(section: 0, element: 0))
            try draft.moveSection("older", to: 2)
        }),
        ("Older is archived, Today is re-sorted", { draft in
            try draft.removeSection("older")
            try draft.moveElement("m8", to: ElementPath(section: 1, element: 0))
            try draft.reloadSection(folder("today", "Today (4)"))
        }),
    ]
}
