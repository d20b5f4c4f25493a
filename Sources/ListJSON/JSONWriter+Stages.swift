import ListDiff

/// An item that `JSONWriter` writes as `{"content":…,"id":…}`: a `JSONItem` writes its content as a
/// JSON value, a stored item (`ListItem`) copies its stored canonical JSON.
///
/// Not API (package-visible).
package protocol JSONWritableItem: JSONDocumentItem {
    /// Writes the content as the writer's next value.
    func writeContent(to writer: inout JSONWriter)
}

extension JSONItem: JSONWritableItem {
    /// Writes `content` as the writer's next value.
    package func writeContent(to writer: inout JSONWriter) {
        writer.value(content)
    }
}

/// Stage objects and sections (`Docs/Formats.md`), keys in code point order.
extension JSONWriter {
    /// `[stage, …]`, each as `stage(_:)` writes it.
    /// - Complexity: O(operations + size of the contents carried).
    @inlinable package mutating func stages<Item: JSONWritableItem>(_ stages: some Sequence<Stage<Item, Item>>) {
        array(stages) { w, stage in w.stage(stage) }
    }

    /// One stage object; keys whose arrays would be empty are left out, so an empty stage gives `{}`.
    /// - Complexity: O(operations + size of the contents carried).
    @inlinable package mutating func stage<Item: JSONWritableItem>(_ stage: Stage<Item, Item>) {
        object { w in
            w.nonEmpty("elementDeleted", stage.elementDeleted) { w, path in w.path(path) }
            w.nonEmpty("elementInserted", stage.elementInserted) { w, change in w.elementChange(change, id: true) }
            w.nonEmpty("elementMoved", stage.elementMoved) { w, move in
                w.object { w in
                    w.key("from")
                    w.path(move.from)
                    w.key("to")
                    w.path(move.to)
                }
            }
            w.nonEmpty("elementUpdated", stage.elementUpdated) { w, change in w.elementChange(change, id: false) }
            w.nonEmpty("sectionDeleted", stage.sectionDeleted) { w, index in w.int(index) }
            w.nonEmpty("sectionInserted", stage.sectionInserted) { w, insertion in
                w.object { w in
                    w.sectionMembers(insertion.section)
                    w.member("index", insertion.index)
                }
            }
            w.nonEmpty("sectionMoved", stage.sectionMoved) { w, move in
                w.object { w in
                    w.member("from", move.from)
                    w.member("to", move.to)
                }
            }
            w.nonEmpty("sectionUpdated", stage.sectionUpdated) { w, update in
                w.object { w in
                    w.key("content")
                    update.model.writeContent(to: &w)
                    w.member("index", update.index)
                }
            }
        }
    }

    /// `{"content":…,"element":…,"id":…,"section":…}`, without `id` for an update (its id is the
    /// updated item's).
    @inlinable mutating func elementChange<Item: JSONWritableItem>(_ change: Stage<Item, Item>.ElementChange, id: Bool) {
        object { w in
            w.key("content")
            change.element.writeContent(to: &w)
            w.member("element", change.path.element)
            if id { w.member("id", change.element.documentID) }
            w.member("section", change.path.section)
        }
    }

    /// `[{"content":…,"elements":[…],"id":…}, …]`: the `sections` array of a snapshot document.
    /// - Complexity: O(size of the sections).
    @inlinable package mutating func sections<Item: JSONWritableItem>(_ sections: some Sequence<ArraySection<Item, Item>>) {
        array(sections) { w, section in w.object { w in w.sectionMembers(section) } }
    }

    /// `"content":…,"elements":[…],"id":…`: a section's members, inside an object the caller opened.
    @inlinable package mutating func sectionMembers<Item: JSONWritableItem>(_ section: ArraySection<Item, Item>) {
        key("content")
        section.model.writeContent(to: &self)
        key("elements")
        array(section.elements) { w, element in w.item(element) }
        member("id", section.model.documentID)
    }

    /// `{"content":…,"id":…}`.
    @inlinable package mutating func item<Item: JSONWritableItem>(_ item: Item) {
        object { w in
            w.key("content")
            item.writeContent(to: &w)
            w.member("id", item.documentID)
        }
    }

    /// `{"element":…,"section":…}`.
    @inlinable package mutating func path(_ path: ElementPath) {
        object { w in
            w.member("element", path.element)
            w.member("section", path.section)
        }
    }

    /// `"name":[…]` when `values` is not empty; nothing otherwise.
    @inlinable mutating func nonEmpty<T>(_ name: StaticString, _ values: [T], _ write: (inout JSONWriter, T) -> Void) {
        guard !values.isEmpty else { return }
        key(name)
        array(values, write)
    }

    /// The members of `object` with one more member, `key`, written by `write` in its place in code
    /// point order; a member of `object` named `key` is left out.
    /// - Complexity: O(size of `object` + what `write` writes).
    package mutating func members(of object: JSONObject, adding key: StaticString, _ write: (inout JSONWriter) -> Void) {
        let name = String(describing: key)
        var added = false
        for member in object.members {
            let order = _UTF8Bytes.compare(member.key, name)
            if order == 0 { continue }
            if order > 0 && !added {
                self.key(key)
                write(&self)
                added = true
            }
            self.key(member.key)
            value(member.value)
        }
        if !added {
            self.key(key)
            write(&self)
        }
    }

    /// The text written, parsed back (at any depth): what `JSONValue`-returning encoders give.
    /// - Precondition: the writer wrote one complete value (its methods only write valid JSON).
    /// - Complexity: O(size of the text).
    package var parsedValue: JSONValue {
        do {
            return try JSONParser(maxDepth: .max).parse(bytes)
        } catch {
            preconditionFailure("JSONWriter: wrote invalid JSON: \(error)")
        }
    }
}
