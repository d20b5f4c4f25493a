import ListJSON

/// A list's sections written as JSON a record at a time (each section's record, then its
/// elements'), between an opening and a closing: the one stage of a copy's journal entry, or a
/// snapshot document. It holds only what was written since the last `take` or `drain`, so that a
/// list of any size is written in pieces.
struct _SectionsWriter {
    private var bytes: [UInt8]
    private let closing: [UInt8]
    /// Whether each section says its `index` (a `sectionInserted` stage's sections do).
    private let indexed: Bool
    private var sections = 0
    private var elements = 0
    /// The id of the open section (its `id`, and `index`, come after its elements).
    private var open: String?

    private init(opening: [UInt8], closing: [UInt8], indexed: Bool) {
        (bytes, self.closing, self.indexed) = (opening, closing, indexed)
    }

    /// The journal entry of a copy into an empty head: one stage whose `sectionInserted` holds every
    /// section with its elements, the bytes `JSONWriter.stage` writes for the same changeset.
    static func copyEntry() -> _SectionsWriter {
        _SectionsWriter(opening: Array(#"[{"sectionInserted":["#.utf8), closing: Array("]}]".utf8), indexed: true)
    }

    /// `copyEntry()` going on after `sections` sections were written, the last of them (`open`,
    /// its id) with `elements` elements so far, without the bytes written before: what a copy's
    /// next records add to its entry (a paged sync counts its entry's bytes page by page).
    static func copyEntry(after sections: Int, open: String, elements: Int) -> _SectionsWriter {
        var writer = _SectionsWriter(opening: [], closing: Array("]}]".utf8), indexed: true)
        (writer.sections, writer.open, writer.elements) = (sections - 1, open, elements)
        return writer
    }

    /// The snapshot document of the list `list` at `version` with `digest`: the bytes
    /// `ListSnapshot.documentJSON` writes for the same sections.
    static func snapshotDocument(list: String, version: Int, digest: ListDigest) -> _SectionsWriter {
        var opening = Array(#"{"digest":"#.utf8)
        JSONWriter.writeString(digest.hex, into: &opening)
        opening += Array(#","list":"#.utf8)
        JSONWriter.writeString(list, into: &opening)
        opening += Array(#","schemaVersion":1,"sections":["#.utf8)
        return _SectionsWriter(opening: opening, closing: Array(#"],"version":\#(version)}"#.utf8), indexed: false)
    }

    mutating func add(_ record: ListPage.Record) {
        if record.isSection {
            closeSection()
            if sections > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: #"{"content":"#.utf8)
            bytes.append(contentsOf: record.item.content)
            bytes.append(contentsOf: #","elements":["#.utf8)
            open = record.item.id
            elements = 0
        } else {
            if elements > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: #"{"content":"#.utf8)
            bytes.append(contentsOf: record.item.content)
            bytes.append(contentsOf: #","id":"#.utf8)
            JSONWriter.writeString(record.item.id, into: &bytes)
            bytes.append(UInt8(ascii: "}"))
            elements += 1
        }
    }

    /// Ends the document after the last record.
    mutating func finish() {
        closeSection()
        bytes.append(contentsOf: closing)
    }

    /// The bytes written since the last `take` or `drain`.
    mutating func take() -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }

    /// Forgets the bytes written since the last `take` or `drain`, and counts them.
    mutating func drain() -> Int {
        defer { bytes.removeAll(keepingCapacity: true) }
        return bytes.count
    }

    private mutating func closeSection() {
        guard let id = open else { return }
        bytes.append(contentsOf: #"],"id":"#.utf8)
        JSONWriter.writeString(id, into: &bytes)
        if indexed { bytes.append(contentsOf: #","index":\#(sections)"#.utf8) }
        bytes.append(UInt8(ascii: "}"))
        sections += 1
        open = nil
    }
}
