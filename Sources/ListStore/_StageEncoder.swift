import ListDiff
import ListJSON

/// Writes stages of a stored list as the stage objects of DESIGN §3 — canonical JSON, keys in code
/// point order, contents copied as they are stored (canonical JSON already).
enum _StageEncoder {
    /// `[stage, stage, …]`.
    static func encode(_ stages: [ListStage]) -> [UInt8] {
        var out: [UInt8] = []
        out.append(UInt8(ascii: "["))
        for (k, stage) in stages.enumerated() {
            if k > 0 { out.append(UInt8(ascii: ",")) }
            encode(stage, into: &out)
        }
        out.append(UInt8(ascii: "]"))
        return out
    }

    static func encode(_ stage: ListStage, into out: inout [UInt8]) {
        var first = true
        func key(_ name: StaticString) {
            out.append(first ? UInt8(ascii: "{") : UInt8(ascii: ","))
            first = false
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            out.append(contentsOf: "\":[".utf8)
        }
        func list<T>(_ name: StaticString, _ values: [T], _ write: (T, inout [UInt8]) -> Void) {
            guard !values.isEmpty else { return }
            key(name)
            for (k, value) in values.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                write(value, &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        list("elementDeleted", stage.elementDeleted) { path, out in writePath(path, &out) }
        list("elementInserted", stage.elementInserted) { change, out in
            out.append(contentsOf: "{\"content\":".utf8)
            out.append(contentsOf: change.element.content)
            out.append(contentsOf: ",\"element\":".utf8)
            writeInt(change.path.element, &out)
            out.append(contentsOf: ",\"id\":".utf8)
            writeString(change.element.id, &out)
            out.append(contentsOf: ",\"section\":".utf8)
            writeInt(change.path.section, &out)
            out.append(UInt8(ascii: "}"))
        }
        list("elementMoved", stage.elementMoved) { move, out in
            out.append(contentsOf: "{\"from\":".utf8)
            writePath(move.from, &out)
            out.append(contentsOf: ",\"to\":".utf8)
            writePath(move.to, &out)
            out.append(UInt8(ascii: "}"))
        }
        list("elementUpdated", stage.elementUpdated) { change, out in
            out.append(contentsOf: "{\"content\":".utf8)
            out.append(contentsOf: change.element.content)
            out.append(contentsOf: ",\"element\":".utf8)
            writeInt(change.path.element, &out)
            out.append(contentsOf: ",\"section\":".utf8)
            writeInt(change.path.section, &out)
            out.append(UInt8(ascii: "}"))
        }
        list("sectionDeleted", stage.sectionDeleted) { index, out in writeInt(index, &out) }
        list("sectionInserted", stage.sectionInserted) { insertion, out in
            out.append(UInt8(ascii: "{"))
            writeSectionMembers(insertion.section, &out)
            out.append(contentsOf: ",\"index\":".utf8)
            writeInt(insertion.index, &out)
            out.append(UInt8(ascii: "}"))
        }
        list("sectionMoved", stage.sectionMoved) { move, out in
            out.append(contentsOf: "{\"from\":".utf8)
            writeInt(move.from, &out)
            out.append(contentsOf: ",\"to\":".utf8)
            writeInt(move.to, &out)
            out.append(UInt8(ascii: "}"))
        }
        list("sectionUpdated", stage.sectionUpdated) { update, out in
            out.append(contentsOf: "{\"content\":".utf8)
            out.append(contentsOf: update.model.content)
            out.append(contentsOf: ",\"index\":".utf8)
            writeInt(update.index, &out)
            out.append(UInt8(ascii: "}"))
        }
        if first { out.append(UInt8(ascii: "{")) }
        out.append(UInt8(ascii: "}"))
    }

    /// `"content":…,"elements":[…],"id":"…"`: a section's members, without braces.
    static func writeSectionMembers(_ section: ListSection, _ out: inout [UInt8]) {
        out.append(contentsOf: "\"content\":".utf8)
        out.append(contentsOf: section.model.content)
        out.append(contentsOf: ",\"elements\":[".utf8)
        for (k, element) in section.elements.enumerated() {
            if k > 0 { out.append(UInt8(ascii: ",")) }
            writeItem(element, &out)
        }
        out.append(contentsOf: "],\"id\":".utf8)
        writeString(section.model.id, &out)
    }

    /// `{"content":…,"id":"…"}`.
    static func writeItem(_ item: ListItem, _ out: inout [UInt8]) {
        out.append(contentsOf: "{\"content\":".utf8)
        out.append(contentsOf: item.content)
        out.append(contentsOf: ",\"id\":".utf8)
        writeString(item.id, &out)
        out.append(UInt8(ascii: "}"))
    }

    static func writePath(_ path: ElementPath, _ out: inout [UInt8]) {
        out.append(contentsOf: "{\"element\":".utf8)
        writeInt(path.element, &out)
        out.append(contentsOf: ",\"section\":".utf8)
        writeInt(path.section, &out)
        out.append(UInt8(ascii: "}"))
    }

    static func writeInt(_ value: Int, _ out: inout [UInt8]) {
        if value == 0 { out.append(UInt8(ascii: "0")); return }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
            UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var magnitude = value.magnitude
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while magnitude > 0 {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            }
            if value < 0 { out.append(UInt8(ascii: "-")) }
            out.append(contentsOf: buffer[(20 - count)...])
        }
    }

    static func writeString(_ string: String, _ out: inout [UInt8]) {
        JSONValue.string(string).serialize(into: &out)
    }
}

extension StagedChangeset where Model == ListItem, Element == ListItem {
    /// The stages as the JSON array of stage objects that the journal stores (DESIGN §3), contents
    /// copied as stored.
    ///
    /// - Complexity: O(operations + size of the contents carried).
    public var stagesJSON: [UInt8] { _StageEncoder.encode(stages) }
}
