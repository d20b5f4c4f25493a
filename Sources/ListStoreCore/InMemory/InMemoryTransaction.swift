import ListJSON
import ListMerge

/// The rows of an `InMemoryStore`, in the shape of the engines' tables.
struct InMemoryTables: Sendable {
    struct List: Sendable {
        var row: ListRow
        var snapshotVersion = 0
        var bytesSinceSnapshot = 0
        /// Whether every section the list deleted is in `deletedSections` (not for a replica list).
        var keepsDeletedSections = true
    }

    struct Section: Sendable {
        var listID: Int64
        var position: Int64
        var model: ListItem
        var hash: ContentHash
    }

    struct Element: Sendable {
        var item: ListItem
        var hash: ContentHash
    }

    struct Replica: Sendable {
        var source: ReplicaSource
        var nextSeq = 1
        var confirmed: [UInt8]?
        var lastConflicts: [UInt8]?
    }

    var identity: StoreIdentity
    var clientID: String
    var lists: [String: List] = [:]
    var names: [Int64: String] = [:]
    var sections: [Int64: Section] = [:]
    var sectionsOfList: [Int64: Set<Int64>] = [:]
    /// Element rows by section row, then position.
    var elements: [Int64: [Int64: Element]] = [:]
    /// Journal entries by list row, then version.
    var journal: [Int64: [Int: JournalEntry]] = [:]
    var storedSnapshots: [Int64: [Int: [UInt8]]] = [:]
    var consumers: [Int64: [String: ConsumerInfo]] = [:]
    /// Recorded pushes by list row, client, then sequence number.
    /// (Client ids by their bytes, as the SQL engines' keys tell them apart.)
    var pushes: [Int64: [[UInt8]: [Int: PushRecord]]] = [:]
    /// The ids of the sections deleted from each list (every list's: none is older than its record).
    var deletedSections: [Int64: Set<ExactString>] = [:]
    var replicas: [Int64: Replica] = [:]
    var outbox: [Int64: [Int: OutboxEntry]] = [:]
    var nextListID: Int64 = 1
    var nextSectionID: Int64 = 1
    /// The store feed, by position.
    /// (`gone`: a commit of a list deleted since, passed over by the feed.)
    var feed: [(position: Int, listID: Int64, list: String, uid: String?, version: Int, deleted: Bool, gone: Bool, fingerprint: Int64)] = []
    /// The secret that seals feed cursors.
    var feedSecret: [UInt8] = (0..<32).map { _ in UInt8.random(in: 0...255) }
    var feedPosition = 0
    var feedBase = 0
    /// The paged syncs under way, by replica list name (their pages land as rows of a staging list).
    var stagedSyncs: [String: StagedSync] = [:]
    /// The replica sets' positions, by pattern.
    var replicaSets: [String: (store: StoreIdentity, position: Int, place: String?, lastConflicts: [UInt8]?, updatedAt: String)] = [:]
    /// Blobs by hash, their parts by hash then first byte, the uploads under way by list row then
    /// hash (the bytes sent), the blobs each list row has (uploaded, or by reference), and when
    /// it used each last (greater: later; none: 0).
    var blobs: [ContentHash: (size: Int, whole: Bool)] = [:]
    var blobParts: [ContentHash: [Int: [UInt8]]] = [:]
    var blobUploads: [Int64: [ContentHash: Int]] = [:]
    var listBlobs: [Int64: [ContentHash: Bool]] = [:]
    var blobUses: [Int64: [ContentHash: Int]] = [:]
    /// The blobs of each list row that its source's contents referred to.
    var blobsFromSource: [Int64: Set<ContentHash>] = [:]
    /// When each upload under way last sent a part (ISO 8601), by list row then hash.
    var blobUploadTimes: [Int64: [ContentHash: String]] = [:]
}

/// The in-memory driver of the store's logic (`StoreTransaction`): its steps read and write a copy
/// of the store's tables, which its store keeps when the transaction returns and drops when it
/// throws.
final class InMemoryTransaction: StoreTransaction {
    let location: String
    let waitsToCommit = false
    var tables: InMemoryTables
    /// Whether this transaction changed a list (its head, or what readers keep of it).
    private(set) var changed = false

    init(_ tables: InMemoryTables, location: String) {
        self.tables = tables
        self.location = location
    }

    // MARK: The store

    func identity() throws -> StoreIdentity { tables.identity }

    func advanceEpoch(clientID: String) throws {
        tables.identity.epoch += 1
        tables.clientID = clientID
    }

    func integrityProblems() throws -> [String] { [] }

    func listNames() throws -> [String] {
        // The store's own lists (`_Names.ownPrefix`) are left out.
        tables.lists.keys.filter { !$0.hasPrefix(_Names.ownPrefix) }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    func summaries(of list: String?) throws -> [ListSummary] {
        try (list.map { tables.lists[$0] == nil ? [] : [$0] } ?? listNames()).map { name in
            let info = try listRow(name, locking: false)
            let sections = try headSections(listID: info.id)
            return ListSummary(
                name: name, version: info.headVersion, digest: info.headDigest, sectionCount: sections.count,
                elementCount: sections.reduce(0) { $0 + $1.elements.count }, baseVersion: info.baseVersion, id: info.uid)
        }
    }

    // MARK: Lists

    func listRow(_ list: String, locking: Bool) throws -> ListRow {
        try _Names.checkFindable(list, in: location)
        guard let row = tables.lists[list]?.row else { throw StoreError.listNotFound(list, in: location) }
        return row
    }

    func headSections(listID: Int64) throws -> [ListSection] {
        sectionRows(of: listID).map { id in
            ListSection(model: tables.sections[id]!.model, elements: tables.elements[id, default: [:]].sorted { $0.key < $1.key }.map(\.value.item))
        }
    }

    /// The list's section rows, in order.
    private func sectionRows(of listID: Int64) -> [Int64] {
        tables.sectionsOfList[listID, default: []].sorted {
            (tables.sections[$0]!.position, $0) < (tables.sections[$1]!.position, $1)
        }
    }

    func storedSnapshot(listID: Int64, after: Int, through: Int) throws -> (version: Int, document: [UInt8])? {
        tables.storedSnapshots[listID, default: [:]].filter { $0.key > after && $0.key <= through }.max { $0.key < $1.key }
            .map { ($0.key, $0.value) }
    }

    func journalStages(listID: Int64, from: Int, through: Int) throws -> [(version: Int, digest: ListDigest, stages: [UInt8])] {
        entries(listID: listID, after: from - 1, through: through).map { ($0.version, $0.digest, $0.stagesJSON) }
    }

    func journalSizes(listID: Int64, after: Int, through: Int, limit: Int) throws -> [Int] {
        entries(listID: listID, after: after, through: through).prefix(limit).map(\.stagesJSON.count)
    }

    func entries(of info: ListRow, after: Int, through: Int, limit: Int) throws -> [JournalEntry] {
        Array(entries(listID: info.id, after: after, through: through).prefix(limit))
    }

    func storedSnapshotVersions(listID: Int64) throws -> [Int] {
        tables.storedSnapshots[listID, default: [:]].keys.sorted()
    }

    func head(of info: ListRow) throws -> StoredHead {
        try lockedHead(of: info.name)
    }

    func clientID() throws -> String { tables.clientID }

    // MARK: Commits

    func lockedHead(of list: String) throws -> StoredHead {
        guard let row = tables.lists[list]?.row else { return .empty }
        var head = StoredHead.empty
        head.listID = row.id
        head.version = row.headVersion
        head.digest = row.headDigest
        for id in sectionRows(of: row.id) {
            let section = tables.sections[id]!
            let elements = tables.elements[id, default: [:]].sorted { $0.key < $1.key }
            head.sections.append(
                HeadSection(
                    model: HeadItem(id: section.model.id, hash: section.hash),
                    elements: elements.map { HeadItem(id: $0.value.item.id, hash: $0.value.hash) }))
            head.sectionRows.append(id)
            head.sectionPositions.append(section.position)
            head.elementPositions += elements.map(\.key)
        }
        return head
    }

    func write(_ whole: CommitRows.WholeSections) throws -> (reservedRows: [Int64], written: Int) {
        var written = 0
        for row in whole.deletedSectionRows {
            guard let section = tables.sections.removeValue(forKey: row) else { throw damaged("section row \(row) is missing") }
            tables.sectionsOfList[section.listID]?.remove(row)
            written += (tables.elements.removeValue(forKey: row)?.count ?? 0) + 1
        }
        guard !whole.insertedSections.isEmpty, whole.failure == nil else { return ([], written) }
        let reserved = (0..<Int64(whole.insertedSections.count)).map { tables.nextSectionID + $0 }
        tables.nextSectionID += Int64(reserved.count)
        for k in whole.insertedSections.indices {
            for element in whole.elements(ofInserted: k) {
                tables.elements[reserved[k], default: [:]][element.position] = InMemoryTables.Element(item: element.item, hash: element.hash)
                written += 1
            }
        }
        return (reserved, written)
    }

    func contents(ofElements slots: [CommitRows.Slot], sections: [Int64]) throws
        -> (elements: [CommitRows.Slot: [UInt8]], sections: [Int64: [UInt8]])
    {
        var found: (elements: [CommitRows.Slot: [UInt8]], sections: [Int64: [UInt8]]) = ([:], [:])
        for slot in slots { found.elements[slot] = tables.elements[slot.section]?[slot.position]?.item.content }
        for row in sections { found.sections[row] = tables.sections[row]?.model.content }
        return found
    }

    func insertList(_ name: String, createdAt: String, keepsDeletedSections: Bool) throws -> Int64 {
        let id = tables.nextListID
        tables.nextListID += 1
        tables.lists[name] = InMemoryTables.List(
            row: ListRow(
                id: id, name: name, uid: ListRow.newUID(), headVersion: 0, headDigest: ListDigest(hex: ""), baseVersion: 0,
                baseSnapshot: nil),
            keepsDeletedSections: keepsDeletedSections)
        tables.names[id] = name
        return id
    }

    func write(_ rows: CommitRows, listID: Int64) throws -> Int {
        for slot in rows.deletedElements {
            guard tables.elements[slot.section]?.removeValue(forKey: slot.position) != nil else { throw damaged("an element row is missing") }
        }
        for section in rows.insertedSections {
            let (id, content, hash) = rows.section(section)
            guard let content else { throw damaged("an inserted section brings no content") }
            tables.sections[section.row] = InMemoryTables.Section(
                listID: listID, position: section.position, model: ListItem(id: id, content: content), hash: hash)
            tables.sectionsOfList[listID, default: []].insert(section.row)
        }
        for section in rows.updatedSections {
            guard tables.sections[section.row] != nil else { throw damaged("section row \(section.row) is missing") }
            tables.sections[section.row]!.position = section.position
            let (_, content, hash) = rows.section(section)
            if section.contentChanged {
                guard let content else { throw damaged("a changed section brings no content") }
                tables.sections[section.row]!.model.content = content
                tables.sections[section.row]!.hash = hash
            }
        }
        // Moved rows leave their old slots before any row takes a new one.
        var moved: [(CommitRows.ElementRow, InMemoryTables.Element)] = []
        for element in rows.movedElements {
            let from = element.from!
            guard let old = tables.elements[from.section]?.removeValue(forKey: from.position) else {
                throw damaged("an element row is missing")
            }
            moved.append((element, old))
        }
        for element in rows.insertedElements {
            guard let content = rows.content(of: element) else { throw damaged("an inserted element brings no content") }
            tables.elements[element.slot.section, default: [:]][element.slot.position] = InMemoryTables.Element(
                item: ListItem(id: rows.identifier(of: element), content: content), hash: rows.hash(of: element))
        }
        for (element, old) in moved {
            var new = old
            if element.contentChanged {
                guard let content = rows.content(of: element) else { throw damaged("a changed element brings no content") }
                new.item.content = content
                new.hash = rows.hash(of: element)
            }
            tables.elements[element.slot.section, default: [:]][element.slot.position] = new
        }
        for element in rows.updatedElements {
            guard tables.elements[element.slot.section]?[element.slot.position] != nil, let content = rows.content(of: element) else {
                throw damaged("an element row is missing")
            }
            tables.elements[element.slot.section]![element.slot.position]!.item.content = content
            tables.elements[element.slot.section]![element.slot.position]!.hash = rows.hash(of: element)
        }
        return rows.deletedElements.count + rows.insertedSections.count + rows.updatedSections.count
            + rows.insertedElements.count + rows.updatedElements.count + rows.movedElements.count
    }

    func setHead(listID: Int64, version: Int, digest: ListDigest, journalBytes: Int) throws -> (snapshotVersion: Int, bytesSinceSnapshot: Int) {
        let name = try name(of: listID)
        tables.lists[name]!.row.headVersion = version
        tables.lists[name]!.row.headDigest = digest
        tables.lists[name]!.bytesSinceSnapshot += journalBytes
        return (tables.lists[name]!.snapshotVersion, tables.lists[name]!.bytesSinceSnapshot)
    }

    func insertStoredSnapshot(document: [UInt8], version: Int, listID: Int64) throws {
        let name = try name(of: listID)
        tables.storedSnapshots[listID, default: [:]][version] = document
        tables.lists[name]!.snapshotVersion = version
        tables.lists[name]!.bytesSinceSnapshot = 0
    }

    func insertJournal(_ journal: CommitRows.Journal, listID: Int64, stagesJSON: [UInt8], digest: ListDigest) throws {
        tables.journal[listID, default: [:]][journal.version] = JournalEntry(
            list: journal.list, version: journal.version, parentVersion: journal.parentVersion, committedAt: journal.committedAt,
            digest: digest, author: journal.author, message: journal.message, sectionCount: journal.sectionCount,
            elementCount: journal.elementCount, stagesJSON: stagesJSON)
    }

    func announce(_ head: StoredHead?, of list: String) throws {
        changed = true
    }

    // MARK: Outbox

    func takeOutboxSeq(listID: Int64) throws -> (seq: Int, confirmedKept: Bool, version: Int, digest: ListDigest)? {
        guard let replica = tables.replicas[listID] else { return nil }
        tables.replicas[listID]!.nextSeq += 1
        return (replica.nextSeq, replica.confirmed != nil, replica.source.version, replica.source.digest)
    }

    func confirmedState(listID: Int64) throws -> [UInt8]? {
        tables.replicas[listID]?.confirmed
    }

    func outbox(of info: ListRow) throws -> [OutboxEntry] {
        tables.outbox[info.id, default: [:]].values.sorted { $0.seq < $1.seq }
    }

    func keepConfirmed(_ document: [UInt8], listID: Int64) throws {
        tables.replicas[listID]?.confirmed = document
    }

    func insertOutbox(
        listID: Int64, seq: Int, intentsJSON: [UInt8], author: String?, message: String?, createdAt: String, localVersion: Int
    ) throws {
        let intents = try Intent.intents(decoding: try JSONParser().parse(intentsJSON))
        tables.outbox[listID, default: [:]][seq] = OutboxEntry(
            seq: seq, intents: intents, author: author, message: message, createdAt: createdAt, localVersion: localVersion,
            pushedVersion: nil, client: tables.clientID)
    }

    // MARK: Replica lists

    func replicaSet(_ pattern: String) throws -> (store: StoreIdentity, position: Int, place: String?, lastConflicts: [UInt8]?, updatedAt: String)? {
        tables.replicaSets[pattern]
    }

    func setReplicaSet(
        _ pattern: String, store: StoreIdentity, position: Int, place: String, lastConflicts: [UInt8]?, updatedAt: String
    ) throws {
        let report = lastConflicts ?? tables.replicaSets[pattern]?.lastConflicts
        tables.replicaSets[pattern] = (store, position, place, report, updatedAt)
    }

    func replicaSource(listID: Int64) throws -> ReplicaSource? {
        tables.replicas[listID]?.source
    }

    func replicaState(listID: Int64) throws -> (hasLocalChanges: Bool, sourceVersion: Int?) {
        (!(tables.outbox[listID]?.isEmpty ?? true), tables.replicas[listID]?.source.version)
    }

    func setReplicaSource(_ source: ReplicaSource, listID: Int64, updatedAt: String) throws {
        if let known = tables.replicas[listID] {
            tables.replicas[listID]!.source = source
            // A position written without the source list's identity keeps the one recorded.
            if source.listID == nil { tables.replicas[listID]!.source.listID = known.source.listID }
        } else {
            tables.replicas[listID] = InMemoryTables.Replica(source: source)
        }
    }

    func moveReplicaSource(
        listID: Int64, to position: ReplicaSource, confirmed: [UInt8]?, lastConflicts: [UInt8]?, updatedAt: String
    ) throws {
        guard let known = tables.replicas[listID] else { return }
        tables.replicas[listID]!.source = position
        if position.listID == nil { tables.replicas[listID]!.source.listID = known.source.listID }
        tables.replicas[listID]!.confirmed = confirmed
        if let lastConflicts { tables.replicas[listID]!.lastConflicts = lastConflicts }
    }

    func deleteOutbox(listID: Int64, seqs: [Int]) throws {
        for seq in seqs { tables.outbox[listID]?.removeValue(forKey: seq) }
    }

    func setPushedVersion(_ version: Int?, listID: Int64, seq: Int, ifClient client: String?) throws {
        guard let entry = tables.outbox[listID]?[seq], client == nil || entry.client == client else { return }
        tables.outbox[listID]![seq]!.pushedVersion = version
    }

    func outboxCount(listID: Int64) throws -> Int {
        tables.outbox[listID]?.count ?? 0
    }

    func outboxCounts(listID: Int64) throws -> (pending: Int, pushed: Int) {
        let entries = tables.outbox[listID, default: [:]].values
        let pushed = entries.filter { $0.pushedVersion != nil }.count
        return (entries.count - pushed, pushed)
    }

    func lastConflicts(listID: Int64) throws -> [UInt8]? {
        tables.replicas[listID]?.lastConflicts
    }

    func setLastConflicts(_ report: [UInt8]?, listID: Int64) throws {
        tables.replicas[listID]?.lastConflicts = report
    }

    func holdsSections(listID: Int64) throws -> Bool {
        !(tables.sectionsOfList[listID]?.isEmpty ?? true)
    }

    func replaceClientID(_ old: String, with new: String) throws {
        if tables.clientID == old { tables.clientID = new }
    }

    func moveOutbox(listID: Int64, from id: PushID, to client: String) throws {
        for (seq, entry) in tables.outbox[listID, default: [:]]
        where entry.client == id.client && seq >= id.seq && entry.pushedVersion == nil {
            tables.outbox[listID]![seq]!.client = client
        }
    }

    // MARK: Consumers and pruning

    func consumers(of info: ListRow) throws -> [ConsumerInfo] {
        tables.consumers[info.id, default: [:]].values.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    func insertConsumer(_ name: String, listID: Int64, version: Int, at time: String) throws {
        if tables.consumers[listID]?[name] != nil {
            tables.consumers[listID]![name]!.version = version
            tables.consumers[listID]![name]!.acknowledgedAt = time
        } else {
            tables.consumers[listID, default: [:]][name] = ConsumerInfo(
                name: name, list: try self.name(of: listID), version: version, registeredAt: time, acknowledgedAt: time)
        }
    }

    func updateConsumer(_ name: String, listID: Int64, version: Int, at time: String) throws -> Bool {
        guard tables.consumers[listID]?[name] != nil else { return false }
        tables.consumers[listID]![name]!.version = version
        tables.consumers[listID]![name]!.acknowledgedAt = time
        return true
    }

    func deleteConsumer(_ name: String, listID: Int64) throws -> Bool {
        tables.consumers[listID]?.removeValue(forKey: name) != nil
    }

    func deleteJournal(listID: Int64, through version: Int) throws -> Int {
        let removed = tables.journal[listID, default: [:]].keys.filter { $0 <= version }
        for key in removed { tables.journal[listID]!.removeValue(forKey: key) }
        return removed.count
    }

    func setBase(listID: Int64, version: Int, snapshot: [UInt8]) throws {
        let name = try name(of: listID)
        tables.lists[name]!.row.baseVersion = version
        tables.lists[name]!.row.baseSnapshot = snapshot
    }

    func dropStoredSnapshots(listID: Int64, through version: Int) throws {
        for key in tables.storedSnapshots[listID, default: [:]].keys where key <= version {
            tables.storedSnapshots[listID]!.removeValue(forKey: key)
        }
        let name = try name(of: listID)
        guard tables.lists[name]!.snapshotVersion < version else { return }
        tables.lists[name]!.snapshotVersion = version
        tables.lists[name]!.bytesSinceSnapshot = entries(listID: listID, after: version, through: .max).reduce(0) { $0 + $1.stagesJSON.count }
    }

    // MARK: Pushes

    func pushRecords(listID: Int64, client: String, seqs: ClosedRange<Int>) throws -> [PushRecord] {
        (tables.pushes[listID]?[Array(client.utf8)]?.values.filter { $0.seq >= seqs.lowerBound && $0.firstSeq <= seqs.upperBound } ?? [])
            .sorted { $0.seq < $1.seq }.prefix(1000).map { $0 }
    }

    func pushRecords(listID: Int64, mergedThrough version: Int) throws -> [PushRecord] {
        tables.pushes[listID]?.values.flatMap { $0.values.filter { $0.version <= version } } ?? []
    }

    func replacePushRecords(listID: Int64, with record: PushRecord) throws {
        let client = Array(record.client.utf8)
        tables.pushes[listID, default: [:]][client, default: [:]] = tables.pushes[listID]?[client]?.filter { $0.key > record.seq } ?? [:]
        tables.pushes[listID]![client]![record.seq] = record
    }

    func latestPushSeq(listID: Int64, client: String) throws -> Int? {
        tables.pushes[listID]?[Array(client.utf8)]?.keys.max()
    }

    func insertPush(listID: Int64, id: PushID, version: Int, conflictsJSON: [UInt8], pushedAt: String, fingerprint: String) throws {
        let conflicts = try Conflict.conflicts(decoding: try JSONParser().parse(conflictsJSON))
        tables.pushes[listID, default: [:]][Array(id.client.utf8), default: [:]][id.seq] = try PushRecord(
            client: id.client, seq: id.seq, version: version, conflicts: conflicts, fingerprint: fingerprint, pushedAt: pushedAt)
    }

    func insertDeletedSections(listID: Int64, ids: [String]) throws {
        tables.deletedSections[listID, default: []].formUnion(ids.map { ExactString($0) })
    }

    func deletedSections(listID: Int64, among ids: Set<ExactString>) throws -> Set<ExactString>? {
        guard let name = tables.names[listID], tables.lists[name]?.keepsDeletedSections == true else { return nil }
        return ids.intersection(tables.deletedSections[listID] ?? [])
    }

    func markJournal(listID: Int64, version: Int, pushedAs id: PushID?, conflictsJSON: [UInt8]?) throws {
        guard tables.journal[listID]?[version] != nil else { throw damaged("version \(version) is missing from the journal") }
        tables.journal[listID]![version]!.pushID = id
        tables.journal[listID]![version]!.conflicts = try conflictsJSON.map { try Conflict.conflicts(decoding: try JSONParser().parse($0)) } ?? []
    }

    // MARK: The store feed

    func appendFeed(listID: Int64, list: String, version: Int, deleted: Bool) throws {
        tables.feedPosition += 1
        let uid = tables.names[listID].flatMap { tables.lists[$0]?.row.uid }
        tables.feed.append((tables.feedPosition, listID, list, uid, version, deleted, false, FeedEvent.newFingerprint()))
    }

    func deleteRows(of info: ListRow) throws {
        for section in tables.sectionsOfList[info.id] ?? [] {
            tables.sections[section] = nil
            tables.elements[section] = nil
        }
        tables.sectionsOfList[info.id] = nil
        (tables.journal[info.id], tables.storedSnapshots[info.id], tables.consumers[info.id]) = (nil, nil, nil)
        (tables.pushes[info.id], tables.replicas[info.id], tables.outbox[info.id]) = (nil, nil, nil)
        tables.deletedSections[info.id] = nil
        for k in tables.feed.indices where tables.feed[k].listID == info.id && !tables.feed[k].deleted { tables.feed[k].gone = true }
        tables.lists[info.name] = nil
        tables.names[info.id] = nil
        changed = true
    }

    func feedBounds() throws -> (base: Int, last: Int) { (tables.feedBase, tables.feedPosition) }

    func feedEvents(after position: Int, limit: Int) throws -> [FeedEvent] {
        // The first row past `position`, by bisection.
        var (low, high) = (0, tables.feed.count)
        while low < high {
            let middle = (low + high) / 2
            if tables.feed[middle].position <= position { low = middle + 1 } else { high = middle }
        }
        return try Array(tables.feed[low...].lazy.filter { !$0.gone }.prefix(limit)).map { row in
            var event: FeedEvent
            if row.deleted {
                event = FeedEvent(position: row.position, list: row.list, entry: nil, listID: row.uid)
            } else {
                guard let entry = tables.journal[row.listID]?[row.version] else {
                    throw damaged("feed position \(row.position) names a journal entry that is missing")
                }
                event = FeedEvent(position: row.position, list: row.list, entry: entry, listID: row.uid)
            }
            event.fingerprint = row.fingerprint
            return event
        }
    }

    func feedMoves(after position: Int, limit: Int) throws -> [FeedMove] {
        var (low, high) = (0, tables.feed.count)
        while low < high {
            let middle = (low + high) / 2
            if tables.feed[middle].position <= position { low = middle + 1 } else { high = middle }
        }
        return tables.feed[low...].lazy.filter { !$0.gone }.prefix(limit).map { row in
            FeedMove(position: row.position, list: row.list, version: row.deleted ? nil : row.version, fingerprint: row.fingerprint)
        }
    }

    func feedFingerprint(at position: Int) throws -> Int64? {
        var (low, high) = (0, tables.feed.count)
        while low < high {
            let middle = (low + high) / 2
            if tables.feed[middle].position < position { low = middle + 1 } else { high = middle }
        }
        return low < tables.feed.count && tables.feed[low].position == position ? tables.feed[low].fingerprint : nil
    }

    func feedSecret() throws -> [UInt8] { tables.feedSecret }

    func forgetFeed(listID: Int64, through version: Int) throws {
        for row in tables.feed where row.listID == listID && row.version <= version && !row.deleted {
            tables.feedBase = max(tables.feedBase, row.position)
        }
        let base = tables.feedBase
        tables.feed.removeAll { ($0.listID == listID && $0.version <= version && !$0.deleted) || ($0.gone && $0.position <= base) }
    }

    // MARK: Internals

    /// The journal entries of a list with a version in `after+1 ... through`, oldest first.
    private func entries(listID: Int64, after: Int, through: Int) -> [JournalEntry] {
        tables.journal[listID, default: [:]].values.filter { $0.version > after && $0.version <= through }.sorted { $0.version < $1.version }
    }

    private func name(of listID: Int64) throws -> String {
        guard let name = tables.names[listID] else { throw damaged("list row \(listID) is missing") }
        return name
    }

    func damaged(_ what: String) -> StoreError {
        StoreError(.damaged, "the store at \(location) is damaged: \(what)")
    }
}
