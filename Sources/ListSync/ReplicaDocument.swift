import ListJSON
import ListMerge
import ListStore
import ListStoreWire

/// What `liststore pull|push|sync|status --json` print about replicas (listed in the repository's
/// `Docs/CommandLine.md`): each is one
/// object with `"schemaVersion": 1`, keys in code point order. The documents of the journal over
/// HTTP are `WireDocument`'s (ListStoreWire).
///
/// ```swift
/// let line = ReplicaDocument.pullResult(try await replica.pull(from: source))
/// ```
package enum ReplicaDocument {
    /// What `pull --json` prints: `{"applied","confirmedChanges"?,"conflicts"?,"list","pages"?,"pending"?,"reason",
    /// "resynced","schemaVersion":1,"version"}`. `pages` (`{"pages","restarted","resumed"}`) when it
    /// resynced in pages (see `PagedSyncReport`); `pending` (local changes rebased on top),
    /// `confirmedChanges` (local changes the source's head now holds) and `conflicts` (those of pushes
    /// whose answer the replica had not heard) only when the replica had local changes.
    ///
    /// ```swift
    /// let line = ReplicaDocument.pullResult(try await replica.pull(from: source))
    /// ```
    /// - Complexity: O(size of the conflicts).
    package static func pullResult(_ result: ReplicaPullResult) -> [UInt8] {
        JSONWriter.object { w in w.pullMembers(result, schemaVersion: true) }
    }

    /// What `push --json` prints: `{"conflicts":[…],"duplicates","list","newClientIDs","pushed",
    /// "schemaVersion":1,"version"}`; `version` (the source version holding the last change pushed)
    /// is null when there was nothing to push; `newClientIDs` counts the new client ids the replica
    /// took because its id was in use by another replica.
    ///
    /// ```swift
    /// let line = ReplicaDocument.pushResult(try await replica.push(to: source))
    /// ```
    /// - Complexity: O(size of the conflicts).
    package static func pushResult(_ result: ReplicaPushResult) -> [UInt8] {
        JSONWriter.object { w in w.pushMembers(result, schemaVersion: true) }
    }

    /// What `sync --json` prints: `{"pull":{…},"push":{…},"schemaVersion":1}`, the members as
    /// `pullResult` and `pushResult` write them (without `schemaVersion`).
    ///
    /// ```swift
    /// let synced = try await replica.sync(with: source)
    /// let line = ReplicaDocument.syncResult(push: synced.push, pull: synced.pull)
    /// ```
    /// - Complexity: O(size of the conflicts).
    package static func syncResult(push: ReplicaPushResult, pull: ReplicaPullResult) -> [UInt8] {
        JSONWriter.object { w in
            w.key("pull")
            w.object { w in w.pullMembers(pull, schemaVersion: false) }
            w.key("push")
            w.object { w in w.pushMembers(push, schemaVersion: false) }
            w.schemaVersion()
        }
    }

    /// What `status --json` prints: `{"replicas":[{"client","confirmedDigest","confirmedVersion",
    /// "headVersion","lastConflicts":[…],"list","pending","pushed","source":{"epoch","list","store"}}…],
    /// "schemaVersion":1}`, one member per replica list, in the order given.
    ///
    /// ```swift
    /// let statuses = try store.lists().compactMap { try store.replicaStatus(of: $0.name) }
    /// let document = ReplicaDocument.replicaStatus(statuses)
    /// ```
    /// - Complexity: O(size of the conflict reports).
    package static func replicaStatus(_ statuses: [ReplicaStatus]) -> [UInt8] {
        JSONWriter.object { w in
            w.key("replicas")
            w.array(statuses) { w, status in w.replicaStatus(status) }
            w.schemaVersion()
        }
    }
}

extension ReplicaDocument {
    /// What `pull --lists --json` prints: `{"applied","changes":[{"change","conflicts"?,"list","version"?}…],
    /// "conflicts":{list:[…]},"created":[…],"cursor","deleted":[…],"lists","reason","resynced","schemaVersion":1}`
    /// (`change`: `created`, `applied`, `pulled`, `deleted`, `pushed`).
    /// - Complexity: O(size of the result).
    package static func setPullResult(_ result: ReplicaSetPullResult, lists pattern: String) -> [UInt8] {
        JSONWriter.object { w in w.setPullMembers(result, lists: pattern, schemaVersion: true) }
    }

    /// What `push --lists --json` prints: `{"lists","pushes":[…each as push --json, without schemaVersion…],"schemaVersion":1}`.
    /// - Complexity: O(size of the results).
    package static func setPushResult(_ results: [ReplicaPushResult], lists pattern: String) -> [UInt8] {
        JSONWriter.object { w in w.setPushMembers(results, lists: pattern, schemaVersion: true) }
    }

    /// What `sync --lists --json` prints: `{"pull":{…},"push":{…},"schemaVersion":1}`, each as
    /// `pull --lists --json` and `push --lists --json` print them, without `schemaVersion`.
    /// - Complexity: O(size of the result).
    package static func setSyncResult(_ result: ReplicaSetSyncResult, lists pattern: String) -> [UInt8] {
        JSONWriter.object { w in
            w.key("pull")
            w.object { w in w.setPullMembers(result.pull, lists: pattern, schemaVersion: false) }
            w.key("push")
            w.object { w in w.setPushMembers(result.push, lists: pattern, schemaVersion: false) }
            w.schemaVersion()
        }
    }

    /// One change of a followed set, as `pull --lists --follow --json` prints it:
    /// `{"change","conflicts"?,"list","schemaVersion":1,"version"?}`.
    /// - Complexity: O(size of its conflicts).
    package static func setChange(_ change: ReplicaSetChange) -> [UInt8] {
        JSONWriter.object { w in w.setChangeMembers(change, schemaVersion: true) }
    }

    /// What `status --lists --json` prints: `{"lastConflicts":{list:[…]},"lists","position":{"cursor",
    /// "epoch","position","store","updatedAt"}|null,"replicas":[…as status --json…],"schemaVersion":1}`
    /// (`cursor`: the feed cursor as the source wrote it; `position` 0 when the source sealed it).
    /// - Complexity: O(size of the statuses).
    package static func setStatus(_ position: ReplicaSetPosition?, statuses: [ReplicaStatus], lists pattern: String) -> [UInt8] {
        JSONWriter.object { w in
            w.member("lastConflicts", JSONWriter.byList(position?.lastConflicts ?? [:]))
            w.member("lists", pattern)
            w.key("position")
            if let position {
                w.object { w in
                    w.member("cursor", "\(position.store.uuid).\(position.store.epoch).\(position.place)")
                    w.member("epoch", position.store.epoch)
                    w.member("position", position.position)
                    w.member("store", position.store.uuid)
                    w.member("updatedAt", position.updatedAt)
                }
            } else {
                w.fragment("null".utf8)
            }
            w.key("replicas")
            w.array(statuses) { w, status in w.replicaStatus(status) }
            w.schemaVersion()
        }
    }
}

extension JSONWriter {
    /// One replica list's status, as `status --json` prints it in `replicas`.
    mutating func replicaStatus(_ status: ReplicaStatus) {
        object { w in
            w.member("client", status.clientID)
            w.member("confirmedDigest", status.source.digest.hex)
            w.member("confirmedVersion", status.source.version)
            w.member("headVersion", status.headVersion)
            w.member("lastConflicts", Conflict.jsonValue(status.lastConflicts))
            w.member("list", status.list)
            w.member("pending", status.pending)
            w.member("pushed", status.pushed)
            w.key("source")
            w.object { w in
                w.member("epoch", status.source.store.epoch)
                w.member("list", status.source.list)
                w.member("store", status.source.store.uuid)
            }
        }
    }

    /// Conflict reports by list name, as one object (keys in code point order).
    static func byList(_ conflicts: [String: [Conflict]]) -> JSONValue {
        .object(JSONObject(uniqueKeysWithValues: conflicts.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map {
            ($0.key, Conflict.jsonValue($0.value))
        }))
    }

    mutating func setChangeMembers(_ change: ReplicaSetChange, schemaVersion: Bool = false) {
        member("change", change.kind.rawValue)
        if !change.conflicts.isEmpty { member("conflicts", Conflict.jsonValue(change.conflicts)) }
        member("list", change.list)
        if schemaVersion { self.schemaVersion() }
        if let version = change.version { member("version", version) }
    }

    mutating func setPullMembers(_ result: ReplicaSetPullResult, lists pattern: String, schemaVersion: Bool) {
        member("applied", result.applied)
        key("changes")
        array(result.changes) { w, change in w.object { w in w.setChangeMembers(change) } }
        member("conflicts", Self.byList(result.conflicts))
        member("created", JSONValue.array(result.created.map(JSONValue.string)))
        member("cursor", result.cursor.map { .string($0.description) } ?? .null)
        member("deleted", JSONValue.array(result.deleted.map(JSONValue.string)))
        member("lists", pattern)
        member("reason", result.reason.map { .string($0.rawValue) } ?? .null)
        member("resynced", result.resynced)
        if schemaVersion { self.schemaVersion() }
    }

    mutating func setPushMembers(_ results: [ReplicaPushResult], lists pattern: String, schemaVersion: Bool) {
        member("lists", pattern)
        key("pushes")
        array(results) { w, result in w.object { w in w.pushMembers(result, schemaVersion: false) } }
        if schemaVersion { self.schemaVersion() }
    }

    /// The members of a `pull --json` document, `schemaVersion` optional.
    mutating func pullMembers(_ result: ReplicaPullResult, schemaVersion: Bool) {
        let local = result.pending > 0 || result.confirmedChanges > 0 || !result.conflicts.isEmpty
        member("applied", result.applied)
        if local {
            member("confirmedChanges", result.confirmedChanges)
            member("conflicts", Conflict.jsonValue(result.conflicts))
        }
        member("list", result.list)
        if let pages = result.pages {
            key("pages")
            object { w in
                w.member("pages", pages.pages)
                w.member("restarted", pages.restarted)
                w.member("resumed", pages.resumed)
            }
        }
        if local {
            member("pending", result.pending)
        }
        member("reason", result.reason.map { .string($0.rawValue) } ?? .null)
        member("resynced", result.resynced)
        if schemaVersion { self.schemaVersion() }
        member("version", result.version)
    }

    /// The members of a `push --json` document, `schemaVersion` optional.
    mutating func pushMembers(_ result: ReplicaPushResult, schemaVersion: Bool) {
        member("conflicts", Conflict.jsonValue(result.conflicts))
        member("duplicates", result.duplicates)
        member("list", result.list)
        member("newClientIDs", result.clientIDsTaken)
        member("pushed", result.pushed)
        if schemaVersion { self.schemaVersion() }
        member("version", result.version.map { JSONValue($0) } ?? .null)
    }
}
