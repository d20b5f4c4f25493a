import ListJSON
import ListStoreCore

extension WireDocument {
    /// `{"after":…|null,"digest":…,"elements":…,"list":…,"listID"?:…,"next":…|null,"records":[…],
    /// "schemaVersion":1,"sections":…,"store":{"epoch":…,"uuid":…},"version":…}`: a page of a list's
    /// head (`GET /v1/lists/{list}/pages`); each record `{"content":…,"id":…}` for an element and
    /// `{"content":…,"id":…,"section":true}` for a section, contents copied as stored.
    /// - Complexity: O(size of the records).
    package static func listPage(_ page: ListPage) -> [UInt8] {
        JSONWriter.object(capacity: page.size + 512) { w in
            w.key("after")
            if let after = page.after { w.value(.string(after.description)) } else { w.null() }
            w.member("digest", page.digest.hex)
            w.member("elements", page.elementCount)
            w.member("list", page.list)
            if let listID = page.listID { w.member("listID", listID) }
            w.key("next")
            if let next = page.next { w.value(.string(next.description)) } else { w.null() }
            w.key("records")
            w.array(page.records) { w, record in
                w.object { w in
                    w.key("content")
                    w.fragment(record.item.content)
                    w.member("id", record.item.id)
                    if record.isSection { w.member("section", true) }
                }
            }
            w.schemaVersion()
            w.member("sections", page.sectionCount)
            w.key("store")
            w.object { w in
                w.member("epoch", page.store.epoch)
                w.member("uuid", page.store.uuid)
            }
            w.member("version", page.version)
        }
    }

    /// A page of `listPage(_:)`.
    /// - Throws: `DecodingError`.
    package static func decodeListPage(_ bytes: [UInt8]) throws -> ListPage {
        let object = try topLevel(bytes, "page")
        guard let records = object["records"]?.arrayValue else { throw DecodingError(description: "page: expected \"records\"") }
        var page = try listPageFrame(object)
        page.records = try records.map(pageRecord)
        return page
    }

    /// A page of `listPage(_:)` whose `records` were read apart, as they arrived
    /// (`StreamedArrayReader` leaves the array empty); its records are empty.
    /// - Throws: `DecodingError`.
    package static func decodeListPageFrame(_ bytes: [UInt8]) throws -> ListPage {
        let object = try topLevel(bytes, "page")
        guard object["records"]?.arrayValue?.isEmpty == true else { throw DecodingError(description: "page: expected \"records\"") }
        return try listPageFrame(object)
    }

    /// One member of a page's `records`.
    /// - Throws: `DecodingError`.
    package static func decodePageRecord(_ bytes: [UInt8]) throws -> ListPage.Record {
        try verbatimPageRecord(bytes) ?? pageRecord(try parse(bytes, "record"))
    }

    /// The record `bytes` holds when they are written as `listPage(_:)` writes one
    /// (`{"content":…,"id":"…"}`, with `,"section":true` before the end, an id without escapes),
    /// its content taken as it is, not parsed: a store checks a page's contents as it lands
    /// (`StoreTransaction.stage`), so a page is parsed once. `nil` for any other text: the parser
    /// reads it.
    /// - Complexity: O(bytes).
    private static func verbatimPageRecord(_ bytes: [UInt8]) -> ListPage.Record? {
        let (opening, idKey, sectionEnd) = (#"{"content":"#.utf8, #","id":""#.utf8, #","section":true}"#.utf8)
        guard bytes.starts(with: opening) else { return nil }
        return bytes.withUnsafeBufferPointer { b -> ListPage.Record? in
            // The content: up to the first comma outside its strings, arrays and objects.
            var (i, depth, inString, escaped) = (opening.count, 0, false, false)
            scanning: while i < b.count {
                let byte = b[i]
                if inString {
                    if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                } else {
                    switch byte {
                    case UInt8(ascii: "\""): inString = true
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        guard depth > 0 else { return nil }
                        depth -= 1
                    case UInt8(ascii: ",") where depth == 0: break scanning
                    default: break
                    }
                }
                i += 1
            }
            let content = opening.count..<i
            guard !content.isEmpty, UnsafeBufferPointer(rebasing: b[i...]).starts(with: idKey) else { return nil }
            i += idKey.count
            let idStart = i
            while i < b.count, b[i] != UInt8(ascii: "\"") {
                guard b[i] != UInt8(ascii: "\\"), b[i] >= 0x20 else { return nil }
                i += 1
            }
            guard i < b.count, let id = String(validating: UnsafeBufferPointer(rebasing: b[idStart..<i]), as: UTF8.self) else { return nil }
            let end = UnsafeBufferPointer(rebasing: b[(i + 1)...])
            let isSection: Bool
            if end.count == 1, end[0] == UInt8(ascii: "}") {
                isSection = false
            } else if end.elementsEqual(sectionEnd) {
                isSection = true
            } else {
                return nil
            }
            return ListPage.Record(isSection: isSection, item: ListItem(id: id, content: Array(b[content])))
        }
    }

    private static func pageRecord(_ value: JSONValue) throws -> ListPage.Record {
        guard let object = value.objectValue, let content = object["content"] else {
            throw DecodingError(description: "records: expected objects with \"id\" and \"content\"")
        }
        let isSection: Bool
        switch object["section"] {
        case nil, .null?: isSection = false
        case .bool(let flag)?: isSection = flag
        default: throw DecodingError(description: "records: \"section\" is true or absent")
        }
        return ListPage.Record(isSection: isSection, item: ListItem(id: try string(object, "id"), json: content))
    }

    private static func listPageFrame(_ object: JSONObject) throws -> ListPage {
        guard let store = object["store"]?.objectValue else { throw DecodingError(description: "store: expected an object") }
        let digest = ListDigest(hex: try string(object, "digest"))
        guard digest.isWellFormed else { throw DecodingError(description: "digest: expected 64 hexadecimal digits") }
        return ListPage(
            list: try string(object, "list"), version: try int(object, "version"), digest: digest,
            listID: try optionalString(object, "listID"), store: StoreIdentity(uuid: try string(store, "uuid"), epoch: try int(store, "epoch")),
            sectionCount: try int(object, "sections"), elementCount: try int(object, "elements"),
            after: try optionalString(object, "after").map(ListPage.Cursor.init), records: [],
            next: try optionalString(object, "next").map(ListPage.Cursor.init))
    }
}
