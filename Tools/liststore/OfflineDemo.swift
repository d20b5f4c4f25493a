import Foundation
import ListDiff
import ListJSON
import ListMerge
import ListStore
import ListSync

/// The second half of `liststore demo`: a laptop's replica of the mailbox is edited offline while the
/// server's list changes too; one sync merges both and reports what clashed.
struct OfflineDemo {
    let server: Store
    let laptopPath: String

    /// Runs the story; returns whether the laptop ended equal to the server and both verify.
    func run() async throws -> Bool {
        let laptop = Replica(store: try await OpenStores.open(laptopPath), list: "inbox")
        let source = LocalSource(server)
        _ = try await laptop.pull(from: source)
        Terminal.out("\n== Offline writes: a laptop's replica in \(laptopPath)\n")

        // Offline on the laptop: three local changes, committed at once and queued.
        for (title, step) in Self.laptopEdits {
            let before = try await StoreFailure.mapping { try await laptop.store.snapshot(of: "inbox").sections }
            let result = try await StoreFailure.mapping { try await laptop.store.edit("inbox", author: "laptop", message: title, step) }
            Terminal.out("\nlaptop, offline: \(title) (local change \(result.pendingSeq ?? 0), pending)\n")
            Terminal.out(try StageSummary(changeset: result.changeset, source: before).text)
        }
        // Meanwhile on the server.
        for (title, step) in Self.serverEdits {
            let before = try await StoreFailure.mapping { try await server.snapshot(of: "inbox").sections }
            let result = try await StoreFailure.mapping { try await server.edit("inbox", author: "server", message: title, step) }
            Terminal.out("\nserver, meanwhile: \(title) (version \(result.version))\n")
            Terminal.out(try StageSummary(changeset: result.changeset, source: before).text)
        }
        let pending = try await StoreFailure.mapping { try await laptop.store.replicaStatus(of: "inbox")?.pending ?? 0 }
        Terminal.out("\n== The laptop is back online with \(pending) pending changes: sync (push, then pull)\n")
        let before = try await StoreFailure.mapping { try await laptop.store.snapshot(of: "inbox").sections }
        let synced = try await laptop.sync(with: source)
        Terminal.out(
            "pushed \(synced.push.pushed) changes; the server merged them into version \(synced.push.version ?? 0)\n")
        for conflict in synced.push.conflicts { Terminal.out("  conflict: \(Self.describe(conflict))\n") }
        let after = try await StoreFailure.mapping { try await laptop.store.snapshot(of: "inbox") }
        let changeset = ListChangeset(source: before, target: after.sections)
        Terminal.out("\nThe laptop's list moves to the merged head in one transition:\n")
        Terminal.out(try StageSummary(changeset: changeset, source: before).text)
        let head = try await StoreFailure.mapping { try await server.snapshot(of: "inbox") }
        for section in head.sections {
            Terminal.out("  \(section.model.id): \(section.elements.map(\.id).joined(separator: ", "))\n")
        }
        let equal = after.digest == head.digest
        let verified = try await StoreFailure.mapping {
            let laptopValid = try await laptop.store.verify().isValid
            return try await server.verify().isValid && laptopValid
        }
        Terminal.out(
            equal && verified
                ? "\nThe laptop equals the server (digest \(Output.short(head.digest))), nothing is pending, and both verify.\n"
                : "\nThe laptop does not equal the server.\n")
        return equal && verified
    }

    private static func describe(_ conflict: Conflict) -> String {
        switch conflict.kind {
        case .contentConflict:
            "\(conflict.item) \(conflict.key.map { "key \"\($0)\"" } ?? "content"): both changed it; the laptop's "
                + "\(conflict.mine?.serialized() ?? "removal") kept, the server's \(conflict.theirs?.serialized() ?? "removal") replaced"
        case .deleted: "\(conflict.item) was deleted on the server; the laptop's change to it was dropped"
        case .sectionDeleted: "\(conflict.item) went into section \(conflict.section?.description ?? "?"), which the server deleted"
        case .removedWithSection: "\(conflict.item) went with the section the laptop deleted"
        case .listDeleted: "\(conflict.item) was changed in a list the server deleted; the change was dropped with the list"
        case .unknownSection:
            conflict.section.map { "\(conflict.item) went into section \($0), which the server's list never had" }
                ?? "\(conflict.item) is a section the server's list never had; the change to it was dropped"
        }
    }

    private static func reloadKey(
        _ draft: inout ListDraft<ListItem, ListItem>, _ id: String, _ key: String, _ value: JSONValue
    ) throws {
        guard let path = draft.elementPath(ExactString(id)) else { return }
        let item = draft.sections[path.section].elements[path.element]
        var object = (try? item.json)?.objectValue ?? JSONObject()
        object[key] = value
        try draft.reloadElement(ListItem(id: id, json: .object(object)))
    }

    private static let laptopEdits: [(String, @Sendable (inout ListDraft<ListItem, ListItem>) throws -> Void)] = [
        ("m1 is pinned and read", { draft in
            try draft.moveElement("m1", to: ElementPath(section: 0, element: 1))
            try reloadKey(&draft, "m1", "unread", false)
        }),
        ("a reply to m7 is drafted at the top of Today", { draft in
            try draft.insert(
                ListItem(id: "d1", json: ["from": "me", "subject": "Re: Standup moved", "unread": false]),
                at: ElementPath(section: 1, element: 0))
        }),
        ("m5 and m3 are retitled", { draft in
            try reloadKey(&draft, "m5", "subject", "Invoice #311 (filed)")
            try reloadKey(&draft, "m3", "subject", "Contract draft v2")
        }),
    ]

    private static let serverEdits: [(String, @Sendable (inout ListDraft<ListItem, ListItem>) throws -> Void)] = [
        ("new mail m10 arrives on top of Today", { draft in
            try draft.insert(
                ListItem(id: "m10", json: ["from": "hal", "subject": "Release notes", "unread": true]),
                at: ElementPath(section: 1, element: 0))
        }),
        ("m1 and m3 are retitled, m5 is deleted", { draft in
            try reloadKey(&draft, "m1", "subject", "Lunch at noon?")
            try reloadKey(&draft, "m3", "subject", "Contract (signed)")
            try draft.removeElement("m5")
        }),
    ]
}
