import ListDiff
import ListJSON
import ListMerge
import ListStore

/// The JSON documents of the journal over HTTP, which are also what `liststore … --json` prints
/// (DESIGN §3): each is one object with `"schemaVersion": 1`, keys in code point order.
///
/// ```swift
/// let bytes = SyncDocument.journal(try store.journal(of: "inbox", after: 7), list: "inbox")
/// let page = try SyncDocument.decodeJournal(bytes)      // the same entries
/// ```
///
/// Decoding ignores unknown keys and throws `SyncDocument.DecodingError` naming what is wrong.
public enum SyncDocument {
    /// A document that does not have the expected shape.
    public struct DecodingError: Error, Sendable, CustomStringConvertible {
        /// One line for people.
        public var description: String
    }

    // MARK: Encoding

    /// `{"epoch":…,"schemaVersion":1,"uuid":…}`: which store serves the journal.
    public static func identity(_ identity: StoreIdentity) -> [UInt8] {
        document(["uuid": .string(identity.uuid), "epoch": JSONValue(identity.epoch)])
    }

    /// `{"lists":[{"baseVersion","digest","elements","name","sections","version"}…],"schemaVersion":1}`.
    public static func lists(_ lists: [ListSummary]) -> [UInt8] {
        document(["lists": .array(lists.map { .object(summaryObject($0)) })])
    }

    /// One list's summary: the members of a `lists` entry plus `schemaVersion`.
    public static func summary(_ summary: ListSummary) -> [UInt8] {
        var object = summaryObject(summary)
        object["schemaVersion"] = 1
        return JSONValue.object(object).serializedBytes()
    }

    /// `{"commits":[{"author"?,"committedAt","digest","elements","message"?,"parentVersion","sections",
    /// "stages":[…],"version"}…],"hasMore":…,"list":…,"schemaVersion":1}`; the stages are copied as
    /// the store recorded them.
    /// - Complexity: O(size of the entries).
    public static func journal(_ page: JournalPage, list: String) -> [UInt8] {
        var out = Array("{\"commits\":[".utf8)
        for (k, entry) in page.entries.enumerated() {
            if k > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: commitObject(entry))
        }
        out.append(contentsOf: "],\"hasMore\":\(page.hasMore),\"list\":".utf8)
        JSONValue.string(list).serialize(into: &out)
        out.append(contentsOf: ",\"schemaVersion\":1}".utf8)
        return out
    }

    /// One journal entry as a `commits` member (without `schemaVersion`), for event streams.
    public static func commitObject(_ entry: JournalEntry) -> [UInt8] {
        var object = JSONObject()
        if let author = entry.author { object["author"] = .string(author) }
        object["committedAt"] = .string(entry.committedAt)
        if !entry.conflicts.isEmpty { object["conflicts"] = Conflict.jsonValue(entry.conflicts) }
        object["digest"] = .string(entry.digest.hex)
        if let push = entry.pushID { object["push"] = pushIDValue(push) }
        object["elements"] = JSONValue(entry.elementCount)
        if let message = entry.message { object["message"] = .string(message) }
        object["parentVersion"] = JSONValue(entry.parentVersion)
        object["sections"] = JSONValue(entry.sectionCount)
        object["version"] = JSONValue(entry.version)
        // Splice the stored stages in, keeping the keys in order: "stages" < "version".
        var text = JSONValue.object(object).serializedBytes()
        let marker = Array(",\"version\":".utf8)
        let at = text.indices.reversed().first { text[$0...].starts(with: marker) } ?? text.count - 1
        text.insert(contentsOf: Array(",\"stages\":".utf8) + entry.stagesJSON, at: at)
        return text
    }

    /// What `commit --json` prints: `{"changed","changes","digest","list","parentVersion","pending"?,
    /// "rowsWritten","schemaVersion":1,"stages","version"}`; `pending` (the local change's sequence
    /// number) only for a commit queued on a replica list (DESIGN §8).
    public static func commit(_ result: CommitResult) -> [UInt8] {
        var object: JSONObject = [
            "list": .string(result.list), "version": JSONValue(result.version),
            "parentVersion": JSONValue(result.parentVersion), "changed": .bool(result.changed),
            "stages": JSONValue(result.stageCount), "changes": JSONValue(result.changeCount),
            "digest": .string(result.digest.hex), "rowsWritten": JSONValue(result.rowsWritten),
        ]
        if let seq = result.pendingSeq { object["pending"] = JSONValue(seq) }
        return document(object)
    }

    /// `{"digest","from","list","schemaVersion":1,"stages":[…],"to"}`: one changeset from version
    /// `from` to the snapshot `to`, with `to`'s digest.
    public static func diff(_ changeset: ListChangeset, from: Int, to: ListSnapshot) -> [UInt8] {
        var out = Array("{\"digest\":".utf8)
        JSONValue.string(to.digest.hex).serialize(into: &out)
        out.append(contentsOf: ",\"from\":\(from),\"list\":".utf8)
        JSONValue.string(to.list).serialize(into: &out)
        out.append(contentsOf: ",\"schemaVersion\":1,\"stages\":".utf8)
        out.append(contentsOf: changeset.isEmpty ? Array("[]".utf8) : changeset.stagesJSON)
        out.append(contentsOf: ",\"to\":\(to.version)}".utf8)
        return out
    }

    /// A push (DESIGN §8): `{"author"?,"client","intents":[…],"message"?,"seq"}`.
    /// - Complexity: O(size of the intents).
    public static func push(_ push: Push) -> [UInt8] {
        var object: JSONObject = [
            "client": .string(push.id.client), "seq": JSONValue(push.id.seq), "intents": Intent.jsonValue(push.intents),
        ]
        if let author = push.author { object["author"] = .string(author) }
        if let message = push.message { object["message"] = .string(message) }
        return JSONValue.object(object).serializedBytes()
    }

    /// A push's answer (DESIGN §8): `{"conflicts":[…],"duplicate","list","schemaVersion":1,"seq","version"}`.
    public static func pushAnswer(_ answer: PushAnswer) -> [UInt8] {
        document(pushAnswerObject(answer))
    }

    /// Pushes a source recorded for a client: `{"list","pushes":[answer…],"schemaVersion":1}`, each
    /// `answer` as `pushAnswer` writes it (without `schemaVersion`).
    public static func pushes(_ answers: [PushAnswer], list: String) -> [UInt8] {
        document(["list": .string(list), "pushes": .array(answers.map { .object(pushAnswerObject($0)) })])
    }

    /// What `pull --json` prints: `{"applied","confirmedChanges"?,"conflicts"?,"list","pending"?,"reason",
    /// "resynced","schemaVersion":1,"version"}`. `pending` (local changes rebased on top),
    /// `confirmedChanges` (local changes the source's head now holds) and `conflicts` (those of pushes
    /// whose answer the replica had not heard) only when the replica had local changes.
    ///
    /// ```swift
    /// let line = SyncDocument.pullResult(try await replica.pull(from: source))
    /// ```
    public static func pullResult(_ result: Replica.PullResult) -> [UInt8] {
        document(pullObject(result))
    }

    /// What `push --json` prints: `{"conflicts":[…],"duplicates","list","pushed","schemaVersion":1,
    /// "version"}`; `version` (the source version holding the last change pushed) is null when there
    /// was nothing to push.
    /// - Complexity: O(size of the conflicts).
    public static func pushResult(_ result: Replica.PushResult) -> [UInt8] {
        document(pushResultObject(result))
    }

    /// What `sync --json` prints: `{"pull":{…},"push":{…},"schemaVersion":1}`, the members as
    /// `pullResult` and `pushResult` write them (without `schemaVersion`).
    ///
    /// ```swift
    /// let synced = try await replica.sync(with: source)
    /// let line = SyncDocument.syncResult(push: synced.push, pull: synced.pull)
    /// ```
    /// - Complexity: O(size of the conflicts).
    public static func syncResult(push: Replica.PushResult, pull: Replica.PullResult) -> [UInt8] {
        document(["push": .object(pushResultObject(push)), "pull": .object(pullObject(pull))])
    }

    /// What `status --json` prints: `{"replicas":[{"client","confirmedDigest","confirmedVersion",
    /// "headVersion","lastConflicts":[…],"list","pending","pushed","source":{"epoch","list","store"}}…],
    /// "schemaVersion":1}`, one member per replica list, in the order given.
    ///
    /// ```swift
    /// let statuses = try store.lists().compactMap { try store.replicaStatus(of: $0.name) }
    /// let document = SyncDocument.replicaStatus(statuses)
    /// ```
    /// - Complexity: O(size of the conflict reports).
    public static func replicaStatus(_ statuses: [ReplicaStatus]) -> [UInt8] {
        document(["replicas": .array(statuses.map { status in
            .object([
                "list": .string(status.list), "client": .string(status.clientID),
                "source": .object([
                    "store": .string(status.source.store.uuid), "epoch": JSONValue(status.source.store.epoch),
                    "list": .string(status.source.list),
                ]),
                "confirmedVersion": JSONValue(status.source.version), "confirmedDigest": .string(status.source.digest.hex),
                "headVersion": JSONValue(status.headVersion), "pending": JSONValue(status.pending),
                "pushed": JSONValue(status.pushed), "lastConflicts": Conflict.jsonValue(status.lastConflicts),
            ])
        })])
    }

    /// `{"consumer","list","schemaVersion":1,"version"}`: a consumer's acknowledged version.
    public static func consumer(_ name: String, of list: String, version: Int) -> [UInt8] {
        document(["consumer": .string(name), "list": .string(list), "version": JSONValue(version)])
    }

    /// `{"error":{"code":…,"message":…,"expectedVersion"?,"currentVersion"?},"schemaVersion":1}`.
    public static func error(code: String, message: String, expectedVersion: Int? = nil, currentVersion: Int? = nil) -> [UInt8] {
        var error: JSONObject = ["code": .string(code), "message": .string(message)]
        if let expectedVersion { error["expectedVersion"] = JSONValue(expectedVersion) }
        if let currentVersion { error["currentVersion"] = JSONValue(currentVersion) }
        return document(["error": .object(error)])
    }

    // MARK: Decoding

    /// The store identity of an `identity` document.
    /// - Throws: `DecodingError`.
    public static func decodeIdentity(_ bytes: [UInt8]) throws -> StoreIdentity {
        let object = try topLevel(bytes, "store identity")
        return StoreIdentity(uuid: try string(object, "uuid"), epoch: try int(object, "epoch"))
    }

    /// The lists of a `lists` document.
    /// - Throws: `DecodingError`.
    public static func decodeLists(_ bytes: [UInt8]) throws -> [ListSummary] {
        let object = try topLevel(bytes, "lists")
        guard let lists = object["lists"]?.arrayValue else { throw DecodingError(description: "lists: expected an array") }
        return try lists.map { value in
            guard let object = value.objectValue else { throw DecodingError(description: "lists: expected objects") }
            return try summary(object)
        }
    }

    /// The summary of a `summary` document.
    /// - Throws: `DecodingError`.
    public static func decodeSummary(_ bytes: [UInt8]) throws -> ListSummary {
        try summary(try topLevel(bytes, "list summary"))
    }

    /// The page of a `journal` document; each entry keeps its stages as JSON text.
    /// - Throws: `DecodingError`.
    public static func decodeJournal(_ bytes: [UInt8]) throws -> JournalPage {
        let object = try topLevel(bytes, "journal")
        let list = try string(object, "list")
        guard let commits = object["commits"]?.arrayValue, let hasMore = object["hasMore"]?.boolValue else {
            throw DecodingError(description: "journal: expected \"commits\" and \"hasMore\"")
        }
        return JournalPage(entries: try commits.map { try entry($0, list: list) }, hasMore: hasMore)
    }

    /// A journal entry of a `commits` member (`list` names its list).
    /// - Throws: `DecodingError`.
    public static func decodeCommitObject(_ bytes: [UInt8], list: String) throws -> JournalEntry {
        try entry(try parse(bytes, "commit"), list: list)
    }

    /// The snapshot of a snapshot document with `list`, `version` and `digest` (`show --json`).
    /// - Throws: `DecodingError`.
    public static func decodeSnapshot(_ bytes: [UInt8]) throws -> ListSnapshot {
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
    public static func decodeDiff(_ bytes: [UInt8], applyingTo state: [ListSection]) throws
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
    public static func decodePush(_ bytes: [UInt8]) throws -> Push {
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
            author: try optionalString(object, "author"), message: try optionalString(object, "message"))
    }

    /// The answer of a `pushAnswer` document.
    /// - Throws: `DecodingError`.
    public static func decodePushAnswer(_ bytes: [UInt8]) throws -> PushAnswer {
        try pushAnswer(try topLevel(bytes, "push answer"))
    }

    /// The answers of a `pushes` document.
    /// - Throws: `DecodingError`.
    public static func decodePushes(_ bytes: [UInt8]) throws -> [PushAnswer] {
        let object = try topLevel(bytes, "pushes")
        guard let pushes = object["pushes"]?.arrayValue else { throw DecodingError(description: "pushes: expected an array") }
        return try pushes.map { value in
            guard let answer = value.objectValue else { throw DecodingError(description: "pushes: expected objects") }
            return try pushAnswer(answer)
        }
    }

    /// The error of an `error` document: its code, message and versions.
    /// - Throws: `DecodingError`.
    public static func decodeError(_ bytes: [UInt8]) throws -> (code: String, message: String, expectedVersion: Int?, currentVersion: Int?) {
        let object = try topLevel(bytes, "error")
        guard let error = object["error"]?.objectValue else { throw DecodingError(description: "error: expected an object") }
        return (
            try string(error, "code"), try string(error, "message"), error["expectedVersion"]?.intValue,
            error["currentVersion"]?.intValue
        )
    }

    // MARK: Internals

    private static func document(_ members: JSONObject) -> [UInt8] {
        var object = members
        object["schemaVersion"] = 1
        return JSONValue.object(object).serializedBytes()
    }

    private static func summaryObject(_ list: ListSummary) -> JSONObject {
        [
            "name": .string(list.name), "version": JSONValue(list.version), "sections": JSONValue(list.sectionCount),
            "elements": JSONValue(list.elementCount), "digest": .string(list.digest.hex),
            "baseVersion": JSONValue(list.baseVersion),
        ]
    }

    private static func summary(_ object: JSONObject) throws -> ListSummary {
        ListSummary(
            name: try string(object, "name"), version: try int(object, "version"),
            digest: ListDigest(hex: try string(object, "digest")), sectionCount: try int(object, "sections"),
            elementCount: try int(object, "elements"), baseVersion: try int(object, "baseVersion"))
    }

    private static func pushIDValue(_ id: PushID) -> JSONValue {
        .object(["client": .string(id.client), "seq": JSONValue(id.seq)])
    }

    private static func pushAnswerObject(_ answer: PushAnswer) -> JSONObject {
        [
            "conflicts": Conflict.jsonValue(answer.conflicts), "duplicate": .bool(answer.duplicate),
            "list": .string(answer.list), "seq": JSONValue(answer.seq), "version": JSONValue(answer.version),
        ]
    }

    private static func pullObject(_ result: Replica.PullResult) -> JSONObject {
        var object: JSONObject = [
            "list": .string(result.list), "version": JSONValue(result.version), "applied": JSONValue(result.applied),
            "resynced": .bool(result.resynced), "reason": result.reason.map { .string($0.rawValue) } ?? .null,
        ]
        if result.pending > 0 || result.confirmedChanges > 0 || !result.conflicts.isEmpty {
            object["pending"] = JSONValue(result.pending)
            object["confirmedChanges"] = JSONValue(result.confirmedChanges)
            object["conflicts"] = Conflict.jsonValue(result.conflicts)
        }
        return object
    }

    private static func pushResultObject(_ result: Replica.PushResult) -> JSONObject {
        [
            "list": .string(result.list), "pushed": JSONValue(result.pushed), "duplicates": JSONValue(result.duplicates),
            "version": result.version.map { JSONValue($0) } ?? .null, "conflicts": Conflict.jsonValue(result.conflicts),
        ]
    }

    private static func pushAnswer(_ object: JSONObject) throws -> PushAnswer {
        guard let duplicate = object["duplicate"]?.boolValue else {
            throw DecodingError(description: "push answer: expected \"duplicate\" to be a boolean")
        }
        return PushAnswer(
            list: try string(object, "list"), version: try int(object, "version"), seq: try int(object, "seq"),
            duplicate: duplicate, conflicts: try conflicts(object["conflicts"] ?? .array([]), "push answer"))
    }

    private static func conflicts(_ value: JSONValue, _ what: String) throws -> [Conflict] {
        do {
            return try Conflict.conflicts(decoding: value)
        } catch {
            throw DecodingError(description: "\(what): conflicts: \(error)")
        }
    }

    private static func optionalString(_ object: JSONObject, _ key: String) throws -> String? {
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

    private static func parse(_ bytes: [UInt8], _ what: String) throws -> JSONValue {
        do {
            return try JSONValue(parsing: bytes)
        } catch {
            throw DecodingError(description: "\(what): invalid JSON: \(error)")
        }
    }

    private static func topLevel(_ bytes: [UInt8], _ what: String) throws -> JSONObject {
        guard let object = try parse(bytes, what).objectValue else {
            throw DecodingError(description: "\(what): expected an object")
        }
        return object
    }

    private static func string(_ object: JSONObject, _ key: String) throws -> String {
        guard let value = object[key]?.stringValue else { throw DecodingError(description: "\(key): expected a string") }
        return value
    }

    private static func int(_ object: JSONObject, _ key: String) throws -> Int {
        guard let value = object[key]?.intValue, value >= 0 else {
            throw DecodingError(description: "\(key): expected a non-negative integer")
        }
        return value
    }
}
