import ListJSON
import ListMerge
import ListStoreCore

/// The JSON documents of the journal over HTTP (the repository's `Docs/Formats.md`), written by the
/// server and read by its clients (`HTTPSource`); `liststore … --json` prints some of them too
/// (`commit`, `lists`, `log`). Each is one object with `"schemaVersion": 1` (a `push` and a
/// `commits` member excepted), keys in code point order, stored stages and contents copied as
/// stored.
///
/// ```swift
/// let bytes = WireDocument.journal(try store.journal(of: "inbox", after: 7), list: "inbox")
/// let page = try WireDocument.decodeJournal(bytes)      // the same entries
/// ```
///
/// Decoding ignores unknown keys and throws `WireDocument.DecodingError` naming what is wrong.
package enum WireDocument {
    /// A document that does not have the expected shape.
    package struct DecodingError: Error, Sendable, CustomStringConvertible {
        /// One line for people.
        package var description: String
    }

    // MARK: Encoding

    /// `{"epoch":…,"schemaVersion":1,"uuid":…}`: which store serves the journal.
    /// - Complexity: O(1).
    package static func identity(_ identity: StoreIdentity) -> [UInt8] {
        JSONWriter.object { w in
            w.member("epoch", identity.epoch)
            w.schemaVersion()
            w.member("uuid", identity.uuid)
        }
    }

    /// `{"lists":[{"baseVersion","digest","elements","name","sections","version"}…],"schemaVersion":1}`.
    /// - Complexity: O(number of lists).
    package static func lists(_ lists: [ListSummary]) -> [UInt8] {
        JSONWriter.object { w in
            w.key("lists")
            w.array(lists) { w, list in w.object { w in w.summaryMembers(list, schemaVersion: false) } }
            w.schemaVersion()
        }
    }

    /// One list's summary: the members of a `lists` entry plus `schemaVersion`, and, for a list
    /// that is a replica, `"replicaOf":{"epoch","list","store"}`: the store and list it follows (a
    /// replica checks it before following the list, so that no store follows itself through a cycle).
    /// - Complexity: O(1).
    package static func summary(_ summary: ListSummary, replicaOf: ReplicaSource? = nil) -> [UInt8] {
        JSONWriter.object { w in w.summaryMembers(summary, schemaVersion: true, replicaOf: replicaOf) }
    }

    /// The `replicaOf` member of a summary document: the store the list follows, `nil` for a list
    /// that is not a replica.
    /// - Throws: `DecodingError`.
    package static func decodeReplicaOf(_ bytes: [UInt8]) throws -> StoreIdentity? {
        guard let replicaOf = try topLevel(bytes, "list summary")["replicaOf"]?.objectValue else { return nil }
        return StoreIdentity(uuid: try string(replicaOf, "store"), epoch: try int(replicaOf, "epoch"))
    }

    /// `{"commits":[{"author"?,"committedAt","conflicts"?,"digest","elements","message"?,"parentVersion",
    /// "push"?,"sections","stages":[…],"version"}…],"hasMore":…,"list":…,"schemaVersion":1}`; the
    /// stages are copied as the store recorded them.
    /// - Complexity: O(size of the entries).
    package static func journal(_ page: JournalPage, list: String) -> [UInt8] {
        JSONWriter.object(capacity: page.entries.reduce(160) { $0 + $1.stagesJSON.count + 256 }) { w in
            w.key("commits")
            w.array(page.entries) { w, entry in w.commit(entry) }
            w.member("hasMore", page.hasMore)
            if let head = page.head {
                w.key("head")
                w.object { w in
                    w.member("baseVersion", head.baseVersion)
                    w.member("digest", head.digest.hex)
                    w.member("version", head.version)
                }
            }
            w.member("list", list)
            if let listID = page.listID {
                w.member("listID", listID)
            }
            w.schemaVersion()
            if let store = page.store {
                w.key("store")
                w.object { w in
                    w.member("epoch", store.epoch)
                    w.member("uuid", store.uuid)
                }
            }
            if let large = page.tooLarge {
                w.key("tooLarge")
                w.object { w in
                    w.member("bytes", large.bytes)
                    w.member("version", large.version)
                }
            }
        }
    }

    /// `{"cursor":…,"events":[{"cursor":…,"entry":{…as a journal's commits…},"list":…}…],"hasMore":…,"schemaVersion":1}`:
    /// a page of the store feed (`GET /v1/changes`), each event a list's commit, or
    /// `{"cursor":…,"deleted":true,"list":…}` for a deleted list; `cursor` is where the follower reads
    /// on, and each event's is the cursor just after it (a follower that stores it with what it
    /// applied resumes exactly there): `cursorAfter` writes it (by default, at the event's position
    /// and fingerprint, not sealed).
    /// - Complexity: O(size of the entries).
    package static func changes(
        _ events: [FeedEvent], cursor: FeedCursor, hasMore: Bool, cursorAfter: ((FeedEvent) -> FeedCursor)? = nil
    ) -> [UInt8] {
        let after = cursorAfter ?? { FeedCursor(store: cursor.store, position: $0.position, fingerprint: $0.fingerprint) }
        return JSONWriter.object(capacity: events.reduce(128) { $0 + ($1.entry?.stagesJSON.count ?? 0) + 320 }) { w in
            w.member("cursor", cursor.description)
            w.key("events")
            w.array(events) { w, event in w.feedEvent(event, cursor: after(event)) }
            w.member("hasMore", hasMore)
            w.schemaVersion()
        }
    }

    /// One event of the store feed, `{"entry":{…},"list":…}` or `{"deleted":true,"list":…}`, as an
    /// event stream's data (`GET /v1/events?lists=`).
    /// - Complexity: O(size of the entry).
    package static func feedEvent(_ event: FeedEvent) -> [UInt8] {
        var writer = JSONWriter(capacity: (event.entry?.stagesJSON.count ?? 0) + 320)
        writer.feedEvent(event)
        return writer.bytes
    }

    /// `{"deleted":true,"list":…,"schemaVersion":1,"version":…}`: what `DELETE /v1/lists/L` and
    /// `liststore drop --json` answer, with the version the list had.
    /// - Complexity: O(1).
    package static func deleted(_ list: String, version: Int) -> [UInt8] {
        JSONWriter.object { w in
            w.member("deleted", true)
            w.member("list", list)
            w.schemaVersion()
            w.member("version", version)
        }
    }

    /// One journal entry as a `commits` member (without `schemaVersion`), for event streams.
    /// - Complexity: O(size of the entry).
    package static func commitObject(_ entry: JournalEntry) -> [UInt8] {
        var writer = JSONWriter(capacity: entry.stagesJSON.count + 256)
        writer.commit(entry)
        return writer.bytes
    }

    /// What `commit --json` prints: `{"changed","changes","digest","list","parentVersion","pending"?,
    /// "rowsWritten","schemaVersion":1,"stages","version"}`; `pending` (the local change's sequence
    /// number) only for a commit queued on a replica list.
    /// - Complexity: O(1).
    package static func commit(_ result: CommitResult) -> [UInt8] {
        JSONWriter.object { w in
            w.member("changed", result.changed)
            w.member("changes", result.changeCount)
            w.member("digest", result.digest.hex)
            w.member("list", result.list)
            w.member("parentVersion", result.parentVersion)
            if let seq = result.pendingSeq {
                w.member("pending", seq)
            }
            w.member("rowsWritten", result.rowsWritten)
            w.schemaVersion()
            w.member("stages", result.stageCount)
            w.member("version", result.version)
        }
    }

    /// `{"digest","from","list","schemaVersion":1,"stages":[…],"to"}`: one changeset from version
    /// `from` to the snapshot `to`, with `to`'s digest.
    /// - Complexity: O(size of the changeset).
    package static func diff(_ changeset: ListChangeset, from: Int, to: ListSnapshot) -> [UInt8] {
        JSONWriter.object { w in
            w.member("digest", to.digest.hex)
            w.member("from", from)
            w.member("list", to.list)
            w.schemaVersion()
            w.key("stages")
            w.stages(changeset.stages)
            w.member("to", to.version)
        }
    }

    /// A push (ListMerge's article "Offline Writes and Conflicts"):
    /// `{"author"?,"client","intents":[…],"listId"?,"message"?,"seq"}` (`listId`: the identity of
    /// the list the change was made for, see `Push.listID`).
    /// - Complexity: O(size of the intents).
    package static func push(_ push: Push) -> [UInt8] {
        JSONWriter.object { w in
            if let author = push.author {
                w.member("author", author)
            }
            w.member("client", push.id.client)
            w.member("intents", Intent.jsonValue(push.intents))
            if let listID = push.listID {
                w.member("listId", listID)
            }
            if let message = push.message {
                w.member("message", message)
            }
            w.member("seq", push.id.seq)
        }
    }

    /// A push's answer: `{"conflicts":[…],"duplicate","fingerprint"?,"list","schemaVersion":1,"seq","version"}`
    /// (`fingerprint`: the recorded push's, see `Push.fingerprint`; absent for pushes recorded before
    /// sources kept them).
    /// - Complexity: O(size of the conflicts).
    package static func pushAnswer(_ answer: PushAnswer) -> [UInt8] {
        JSONWriter.object { w in w.pushAnswerMembers(answer, schemaVersion: true) }
    }

    /// Pushes a source recorded for a client: `{"list","pushes":[answer…],"schemaVersion":1}`, each
    /// `answer` as `pushAnswer` writes it (without `schemaVersion`).
    /// - Complexity: O(size of the conflicts).
    package static func pushes(_ answers: [PushAnswer], list: String) -> [UInt8] {
        JSONWriter.object { w in
            w.member("list", list)
            w.key("pushes")
            w.array(answers) { w, answer in w.object { w in w.pushAnswerMembers(answer, schemaVersion: false) } }
            w.schemaVersion()
        }
    }

    /// `{"consumer","list","schemaVersion":1,"version"}`: a consumer's acknowledged version.
    /// - Complexity: O(1).
    package static func consumer(_ name: String, of list: String, version: Int) -> [UInt8] {
        JSONWriter.object { w in
            w.member("consumer", name)
            w.member("list", list)
            w.schemaVersion()
            w.member("version", version)
        }
    }

    /// `{"error":{"code":…,"currentVersion"?,"expectedVersion"?,"message":…},"schemaVersion":1}`.
    /// - Complexity: O(1).
    package static func error(code: String, message: String, expectedVersion: Int? = nil, currentVersion: Int? = nil) -> [UInt8] {
        JSONWriter.object { w in
            w.key("error")
            w.object { w in
                w.member("code", code)
                if let currentVersion {
                    w.member("currentVersion", currentVersion)
                }
                if let expectedVersion {
                    w.member("expectedVersion", expectedVersion)
                }
                w.member("message", message)
            }
            w.schemaVersion()
        }
    }

    // MARK: Decoding

    /// The store identity of an `identity` document.
    /// - Throws: `DecodingError`.
    package static func decodeIdentity(_ bytes: [UInt8]) throws -> StoreIdentity {
        let object = try topLevel(bytes, "store identity")
        return StoreIdentity(uuid: try string(object, "uuid"), epoch: try int(object, "epoch"))
    }

    /// The lists of a `lists` document.
    /// - Throws: `DecodingError`.
    package static func decodeLists(_ bytes: [UInt8]) throws -> [ListSummary] {
        let object = try topLevel(bytes, "lists")
        guard let lists = object["lists"]?.arrayValue else { throw DecodingError(description: "lists: expected an array") }
        return try lists.map { value in
            guard let object = value.objectValue else { throw DecodingError(description: "lists: expected objects") }
            return try summary(object)
        }
    }

    /// The summary of a `summary` document.
    /// - Throws: `DecodingError`.
    package static func decodeSummary(_ bytes: [UInt8]) throws -> ListSummary {
        try summary(try topLevel(bytes, "list summary"))
    }

    /// The page of a `journal` document; each entry keeps its stages as JSON text.
    /// - Throws: `DecodingError`.
    package static func decodeJournal(_ bytes: [UInt8]) throws -> JournalPage {
        let object = try topLevel(bytes, "journal")
        let list = try string(object, "list")
        guard let commits = object["commits"]?.arrayValue, let hasMore = object["hasMore"]?.boolValue else {
            throw DecodingError(description: "journal: expected \"commits\" and \"hasMore\"")
        }
        let frame = try journalFrame(object)
        var page = JournalPage(
            entries: try commits.map { try entry($0, list: list) }, hasMore: hasMore, listID: frame.listID, head: frame.head, store: frame.store)
        page.tooLarge = try tooLarge(object)
        return page
    }

    /// The list and `hasMore` of a journal page whose `commits` were read apart, as they arrived
    /// (`StreamedArrayReader` leaves the array empty).
    /// - Throws: `DecodingError`.
    package static func decodeJournalFrame(_ bytes: [UInt8]) throws
        -> (list: String, hasMore: Bool, listID: String?, head: JournalPage.Head?, store: StoreIdentity?, tooLarge: JournalPage.TooLarge?)
    {
        let object = try topLevel(bytes, "journal")
        guard object["commits"]?.arrayValue?.isEmpty == true, let hasMore = object["hasMore"]?.boolValue else {
            throw DecodingError(description: "journal: expected \"commits\" and \"hasMore\"")
        }
        let frame = try journalFrame(object)
        return (try string(object, "list"), hasMore, frame.listID, frame.head, frame.store, try tooLarge(object))
    }

    /// The optional members of a journal page: the list's identity, its head, the store's identity.
    /// A journal page's `tooLarge` member: the next entry, too large for the reader's bound.
    private static func tooLarge(_ object: JSONObject) throws -> JournalPage.TooLarge? {
        guard let value = object["tooLarge"], value != .null else { return nil }
        guard let large = value.objectValue else { throw DecodingError(description: "tooLarge: expected an object") }
        return JournalPage.TooLarge(version: try int(large, "version"), bytes: try int(large, "bytes"))
    }

    private static func journalFrame(_ object: JSONObject) throws -> (listID: String?, head: JournalPage.Head?, store: StoreIdentity?) {
        let listID = try object["listID"].map { value in
            guard let id = value.stringValue else { throw DecodingError(description: "listID: expected a string") }
            return id
        }
        let head = try object["head"].map { value in
            guard let head = value.objectValue else { throw DecodingError(description: "head: expected an object") }
            return JournalPage.Head(
                version: try int(head, "version"), digest: ListDigest(hex: try string(head, "digest")), baseVersion: try int(head, "baseVersion"))
        }
        let store = try object["store"].map { value in
            guard let store = value.objectValue else { throw DecodingError(description: "store: expected an object") }
            return StoreIdentity(uuid: try string(store, "uuid"), epoch: try int(store, "epoch"))
        }
        return (listID, head, store)
    }

    /// A journal entry of a `commits` member (`list` names its list).
    /// - Throws: `DecodingError`.
    package static func decodeCommitObject(_ bytes: [UInt8], list: String) throws -> JournalEntry {
        try entry(try parse(bytes, "commit"), list: list)
    }

    /// One event of the store feed (an event stream's data, or a member of a `changes` page's
    /// `events`), at `position`.
    /// - Throws: `DecodingError`.
    package static func decodeFeedEvent(_ bytes: [UInt8], position: Int) throws -> FeedEvent {
        try feedEvent(try parse(bytes, "feed event"), position: position)
    }

    /// A `changes` page: its events, each with the cursor just after it, the page's cursor, and
    /// whether more follow.
    /// - Throws: `DecodingError` (a cursor that is not one is one).
    package static func decodeChanges(_ bytes: [UInt8]) throws -> (events: [(event: FeedEvent, cursor: FeedCursor)], cursor: FeedCursor, hasMore: Bool) {
        let object = try topLevel(bytes, "changes")
        guard let events = object["events"]?.arrayValue else { throw DecodingError(description: "changes: expected \"events\"") }
        let frame = try changesFrame(object)
        return (try events.map(changesEvent), frame.cursor, frame.hasMore)
    }

    /// One member of a `changes` page's `events`: the event and the cursor just after it.
    /// - Throws: `DecodingError`.
    package static func decodeChangesEvent(_ bytes: [UInt8]) throws -> (event: FeedEvent, cursor: FeedCursor) {
        try changesEvent(try parse(bytes, "feed event"))
    }

    /// The cursor and `hasMore` of a `changes` page whose `events` were read apart, as they arrived
    /// (`StreamedArrayReader` leaves the array empty).
    /// - Throws: `DecodingError`.
    package static func decodeChangesFrame(_ bytes: [UInt8]) throws -> (cursor: FeedCursor, hasMore: Bool) {
        let object = try topLevel(bytes, "changes")
        guard object["events"]?.arrayValue?.isEmpty == true else { throw DecodingError(description: "changes: expected \"events\"") }
        return try changesFrame(object)
    }

    private static func changesFrame(_ object: JSONObject) throws -> (cursor: FeedCursor, hasMore: Bool) {
        guard let hasMore = object["hasMore"]?.boolValue else { throw DecodingError(description: "changes: expected \"hasMore\"") }
        return (try changesCursor(object), hasMore)
    }

    private static func changesEvent(_ value: JSONValue) throws -> (event: FeedEvent, cursor: FeedCursor) {
        let at = try changesCursor(value.objectValue)
        return (try feedEvent(value, position: at.position), at)
    }

    private static func changesCursor(_ object: JSONObject?) throws -> FeedCursor {
        guard let text = object?["cursor"]?.stringValue, let cursor = try? FeedCursor(parsing: text) else {
            throw DecodingError(description: "changes: expected a \"cursor\"")
        }
        return cursor
    }

    private static func feedEvent(_ value: JSONValue, position: Int) throws -> FeedEvent {
        guard let object = value.objectValue, let list = object["list"]?.stringValue else {
            throw DecodingError(description: "feed event: expected an object with \"list\"")
        }
        if object["deleted"]?.boolValue == true {
            return FeedEvent(position: position, list: list, entry: nil, listID: try optionalString(object, "listId"))
        }
        guard let entry = object["entry"] else { throw DecodingError(description: "feed event: expected \"entry\" or \"deleted\"") }
        return FeedEvent(
            position: position, list: list, entry: try self.entry(entry, list: list), listID: try optionalString(object, "listId"))
    }

    /// The snapshot of a snapshot document with `list`, `version` and `digest` (`show --json`).
    /// - Throws: `DecodingError`.
    package static func decodeSnapshot(_ bytes: [UInt8]) throws -> ListSnapshot {
        let value = try parse(bytes, "snapshot")
        guard let object = value.objectValue else { throw DecodingError(description: "snapshot: expected an object") }
        let sections: [ListSection]
        do {
            sections = try SnapshotDocument.sections(decoding: value)
        } catch {
            throw DecodingError(description: "snapshot: \(error)")
        }
        return ListSnapshot(
            list: try string(object, "list"), version: try int(object, "version"),
            digest: ListDigest(hex: try string(object, "digest")), sections: sections)
    }

    /// The changeset of a `diff` document, decoded against `state` (the list at its `from` version),
    /// and the snapshot it leads to.
    /// - Throws: `DecodingError`; `DocumentError` when the stages do not apply to `state`.
    package static func decodeDiff(_ bytes: [UInt8], applyingTo state: [ListSection]) throws
        -> (changeset: ListChangeset, to: ListSnapshot)
    {
        let object = try topLevel(bytes, "diff")
        guard let stages = object["stages"] else { throw DecodingError(description: "stages: expected an array") }
        let (changeset, result) = try StageDocument.decodeStages(stages, applyingTo: state)
        let to = ListSnapshot(
            list: try string(object, "list"), version: try int(object, "to"), digest: ListDigest(hex: try string(object, "digest")),
            sections: result)
        return (changeset, to)
    }

    /// The push of a `push` document.
    /// - Throws: `DecodingError` (wrong or missing members, a sequence number below 1, a bad intent).
    package static func decodePush(_ bytes: [UInt8]) throws -> Push {
        let object = try topLevel(bytes, "push")
        let seq = try int(object, "seq")
        guard seq >= 1 else { throw DecodingError(description: "push: \"seq\" must be 1 or more") }
        guard let intentsValue = object["intents"] else { throw DecodingError(description: "push: expected \"intents\"") }
        let intents: [Intent]
        do {
            intents = try Intent.intents(decoding: intentsValue)
        } catch {
            throw DecodingError(description: "push: intents: \(error)")
        }
        return Push(
            id: PushID(client: try string(object, "client"), seq: seq), intents: intents,
            author: try optionalString(object, "author"), message: try optionalString(object, "message"),
            listID: try optionalString(object, "listId"))
    }

    /// The answer of a `pushAnswer` document.
    /// - Throws: `DecodingError`.
    package static func decodePushAnswer(_ bytes: [UInt8]) throws -> PushAnswer {
        try pushAnswer(try topLevel(bytes, "push answer"))
    }

    /// The answers of a `pushes` document.
    /// - Throws: `DecodingError`.
    package static func decodePushes(_ bytes: [UInt8]) throws -> [PushAnswer] {
        let object = try topLevel(bytes, "pushes")
        guard let pushes = object["pushes"]?.arrayValue else { throw DecodingError(description: "pushes: expected an array") }
        return try pushes.map { value in
            guard let answer = value.objectValue else { throw DecodingError(description: "pushes: expected objects") }
            return try pushAnswer(answer)
        }
    }

    /// The error of an `error` document: its code, message and versions.
    /// - Throws: `DecodingError`.
    package static func decodeError(_ bytes: [UInt8]) throws -> (code: String, message: String, expectedVersion: Int?, currentVersion: Int?) {
        let object = try topLevel(bytes, "error")
        guard let error = object["error"]?.objectValue else { throw DecodingError(description: "error: expected an object") }
        return (
            try string(error, "code"), try string(error, "message"), error["expectedVersion"]?.intValue,
            error["currentVersion"]?.intValue
        )
    }

    // MARK: Internals

    private static func summary(_ object: JSONObject) throws -> ListSummary {
        ListSummary(
            name: try string(object, "name"), version: try int(object, "version"),
            digest: ListDigest(hex: try string(object, "digest")), sectionCount: try int(object, "sections"),
            elementCount: try int(object, "elements"), baseVersion: try int(object, "baseVersion"),
            id: try optionalString(object, "id"))
    }

    private static func pushAnswer(_ object: JSONObject) throws -> PushAnswer {
        guard let duplicate = object["duplicate"]?.boolValue else {
            throw DecodingError(description: "push answer: expected \"duplicate\" to be a boolean")
        }
        return PushAnswer(
            list: try string(object, "list"), version: try int(object, "version"), seq: try int(object, "seq"),
            duplicate: duplicate, conflicts: try conflicts(object["conflicts"] ?? .array([]), "push answer"),
            fingerprint: try optionalString(object, "fingerprint"))
    }

    private static func conflicts(_ value: JSONValue, _ what: String) throws -> [Conflict] {
        do {
            return try Conflict.conflicts(decoding: value)
        } catch {
            throw DecodingError(description: "\(what): conflicts: \(error)")
        }
    }

    static func optionalString(_ object: JSONObject, _ key: String) throws -> String? {
        guard let value = object[key], value != .null else { return nil }
        guard let string = value.stringValue else { throw DecodingError(description: "\(key): expected a string") }
        return string
    }

    private static func entry(_ value: JSONValue, list: String) throws -> JournalEntry {
        guard let object = value.objectValue else { throw DecodingError(description: "commits: expected objects") }
        guard let stages = object["stages"], stages.arrayValue != nil else {
            throw DecodingError(description: "commits: expected \"stages\" to be an array")
        }
        return JournalEntry(
            list: list, version: try int(object, "version"), parentVersion: try int(object, "parentVersion"),
            committedAt: try string(object, "committedAt"), digest: ListDigest(hex: try string(object, "digest")),
            author: object["author"]?.stringValue, message: object["message"]?.stringValue,
            sectionCount: try int(object, "sections"), elementCount: try int(object, "elements"),
            stagesJSON: stages.serializedBytes(), pushID: try pushID(object["push"]),
            conflicts: try conflicts(object["conflicts"] ?? .array([]), "commits"))
    }

    private static func pushID(_ value: JSONValue?) throws -> PushID? {
        guard let value, value != .null else { return nil }
        guard let object = value.objectValue else { throw DecodingError(description: "push: expected an object") }
        return PushID(client: try string(object, "client"), seq: try int(object, "seq"))
    }

    static func parse(_ bytes: [UInt8], _ what: String) throws -> JSONValue {
        do {
            return try JSONValue(parsing: bytes)
        } catch {
            throw DecodingError(description: "\(what): invalid JSON: \(error)")
        }
    }

    static func topLevel(_ bytes: [UInt8], _ what: String) throws -> JSONObject {
        guard let object = try parse(bytes, what).objectValue else {
            throw DecodingError(description: "\(what): expected an object")
        }
        return object
    }

    static func string(_ object: JSONObject, _ key: String) throws -> String {
        guard let value = object[key]?.stringValue else { throw DecodingError(description: "\(key): expected a string") }
        return value
    }

    static func int(_ object: JSONObject, _ key: String) throws -> Int {
        guard let value = object[key]?.intValue, value >= 0 else {
            throw DecodingError(description: "\(key): expected a non-negative integer")
        }
        return value
    }
}

extension JSONWriter {
    /// `"author"?,"committedAt","conflicts"?,"digest","elements","message"?,"parentVersion","push"?,
    /// "sections","stages","version"` in braces; the stages copied as stored.
    mutating func commit(_ entry: JournalEntry) {
        object { w in
            if let author = entry.author {
                w.member("author", author)
            }
            w.member("committedAt", entry.committedAt)
            if !entry.conflicts.isEmpty {
                w.member("conflicts", Conflict.jsonValue(entry.conflicts))
            }
            w.member("digest", entry.digest.hex)
            w.member("elements", entry.elementCount)
            if let message = entry.message {
                w.member("message", message)
            }
            w.member("parentVersion", entry.parentVersion)
            if let push = entry.pushID {
                w.key("push")
                w.object { w in
                    w.member("client", push.client)
                    w.member("seq", push.seq)
                }
            }
            w.member("sections", entry.sectionCount)
            w.key("stages")
            w.fragment(entry.stagesJSON)
            w.member("version", entry.version)
        }
    }

    /// `{"cursor"?,"entry":{…},"list":…}` or `{"cursor"?,"deleted":true,"list":…}`: one event of
    /// the store feed.
    mutating func feedEvent(_ event: FeedEvent, cursor: FeedCursor? = nil) {
        object { w in
            if let cursor { w.member("cursor", cursor.description) }
            if let entry = event.entry {
                w.key("entry")
                w.commit(entry)
            } else {
                w.member("deleted", true)
            }
            w.member("list", event.list)
            if let listID = event.listID { w.member("listId", listID) }
        }
    }

    /// `"baseVersion","digest","elements","name","schemaVersion"?,"sections","version"`.
    mutating func summaryMembers(_ list: ListSummary, schemaVersion: Bool, replicaOf: ReplicaSource? = nil) {
        member("baseVersion", list.baseVersion)
        member("digest", list.digest.hex)
        member("elements", list.elementCount)
        if let id = list.id { member("id", id) }
        member("name", list.name)
        if let replicaOf {
            key("replicaOf")
            object { w in
                w.member("epoch", replicaOf.store.epoch)
                w.member("list", replicaOf.list)
                w.member("store", replicaOf.store.uuid)
            }
        }
        if schemaVersion { self.schemaVersion() }
        member("sections", list.sectionCount)
        member("version", list.version)
    }

    /// `"conflicts","duplicate","fingerprint"?,"list","schemaVersion"?,"seq","version"`.
    mutating func pushAnswerMembers(_ answer: PushAnswer, schemaVersion: Bool) {
        member("conflicts", Conflict.jsonValue(answer.conflicts))
        member("duplicate", answer.duplicate)
        if let fingerprint = answer.fingerprint { member("fingerprint", fingerprint) }
        member("list", answer.list)
        if schemaVersion { self.schemaVersion() }
        member("seq", answer.seq)
        member("version", answer.version)
    }
}
