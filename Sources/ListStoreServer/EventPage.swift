import ListStoreCore
import ListStoreWire
import NIOCore

/// A journal page as the events of a stream: `id: V`, `event: commit`, `data:` the entry, each.
struct EventPage: Sendable {
    var events = ByteBuffer()
    /// The version of the last event, nil when the page is empty.
    var lastVersion: Int?
    var hasMore: Bool
    /// The identity of the list read (see `JournalPage.listID`).
    var listID: String?

    init(_ page: JournalPage) {
        hasMore = page.hasMore
        listID = page.listID
        for entry in page.entries {
            events.writeString("id: \(entry.version)\nevent: commit\ndata: ")
            events.writeBytes(WireDocument.commitObject(entry))
            events.writeString("\n\n")
            lastVersion = entry.version
        }
    }
}
