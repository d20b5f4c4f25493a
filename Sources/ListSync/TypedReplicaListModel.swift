import ListDiff
import ListStore
import Observation

/// A replica list as an observable model in the app's own types: ``ReplicaListModel`` with its
/// sections, transitions and edits as `ArraySection<Model, Element>` of `StorableItem` values.
///
/// ```swift
/// struct Folder: StorableItem { var id: String; var differenceIdentifier: String { id }
///     func isContentEqual(to source: Folder) -> Bool { true } }
/// struct Message: StorableItem { var id: String; var text: String; var differenceIdentifier: String { id }
///     func isContentEqual(to source: Message) -> Bool { text == source.text } }
///
/// let model = TypedReplicaListModel<Folder, Message>(replica: replica, source: source)
/// List(model.sections, id: \.model.id) { section in
///     ForEach(section.elements, id: \.id) { Text($0.text) }    // no JSON, no `try`
/// }
/// try await model.edit { draft in try draft.append(Message(id: "m9", text: "new"), toSection: "inbox") }
/// ```
///
/// Every content is decoded once, when a transition brings it, and kept while it stays the same:
/// reading `sections` decodes nothing. Each transition of the untyped model is one of this one, in
/// the same main-actor turn, its changeset in the app's types. A content that does not decode as
/// the types (written by another version of the app, say) leaves `sections` as they were and the
/// error in `decodingError`; edits are refused until a transition decodes again, and that
/// transition is then one diff from what the model showed. An edit writes anew only the items whose
/// encoding it changed: the others keep their stored bytes, members the app does not know included.
///
/// It needs the Observation framework: macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1.
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
@MainActor @Observable
public final class TypedReplicaListModel<Model: StorableItem & Sendable, Element: StorableItem & Sendable> {
    /// A section of the list in the app's types.
    public typealias Section = ArraySection<Model, Element>

    /// A change of `sections`, with the staged changeset that makes it.
    public struct Transition: Sendable {
        /// The staged changeset that turns the previous `sections` into `sections`.
        public var changeset: StagedChangeset<Model, Element>
        /// The replica's version before the transition.
        public var fromVersion: Int
        /// The replica's version after it.
        public var toVersion: Int
        /// The sections after it.
        public var sections: [Section]
        /// What made it.
        public var cause: ReplicaListModel.Transition.Cause
    }

    /// The untyped model this one shows: its replica, source, syncing and status.
    public let untyped: ReplicaListModel
    /// The replica's head in the app's types: what the UI shows.
    public private(set) var sections: [Section] = []
    /// Why the last transition could not be shown in the app's types; `nil` when it could.
    public private(set) var decodingError: (any Error)?

    /// The replica's head version (see `ReplicaListModel.version`).
    public var version: Int { untyped.version }
    /// Loaded, pending changes, syncing, offline, the last error and sync (`ReplicaListModel.Status`).
    public var status: ReplicaListModel.Status { untyped.status }

    @ObservationIgnored private var decoder = _TypedDecoder<Model, Element>()
    @ObservationIgnored private var subscribers: [UInt64: AsyncStream<Transition>.Continuation] = [:]
    @ObservationIgnored private var lastSubscriber: UInt64 = 0

    /// A model of `replica` syncing with `source` (a ``ReplicaListModel`` made for it).
    public convenience init(replica: Replica<Store>, source: any ListSource) {
        self.init(ReplicaListModel(replica: replica, source: source))
    }

    /// A model showing `untyped` in the app's types, from what it shows now.
    public init(_ untyped: ReplicaListModel) {
        self.untyped = untyped
        do {
            sections = try decoder.sections(untyped.sections)
        } catch {
            decodingError = error
        }
        untyped.observers.append { [weak self] transition in self?.apply(transition) }
    }

    deinit {
        for continuation in subscribers.values { continuation.finish() }
    }

    /// The transitions from now on, in order (see `ReplicaListModel.transitions()`).
    public func transitions() -> AsyncStream<Transition> {
        let (stream, continuation) = AsyncStream.makeStream(of: Transition.self, bufferingPolicy: .unbounded)
        lastSubscriber += 1
        let id = lastSubscriber
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { @MainActor in self?.subscribers[id] = nil }
        }
        return stream
    }

    /// Changes a copy of `sections` with `body` and commits it to the replica, as
    /// `ReplicaListModel.edit(author:message:_:)`: when it returns, `sections` is the new head.
    ///
    /// - Throws: `decodingError` while the list does not decode as the types; what `body` throws;
    ///   `.invalidSnapshot` when a value does not encode; the commit's errors. Nothing is committed then.
    @discardableResult
    public func edit(
        author: String? = nil, message: String? = nil, _ body: (inout ListDraft<Model, Element>) throws -> Void
    ) async throws -> CommitResult {
        if let decodingError { throw decodingError }
        var draft = ListDraft(sections: sections)
        try body(&draft)
        return try await untyped.commit(try stored(draft.sections), author: author, message: message)
    }

    /// `typed` as stored sections. An item the edit left as it was keeps its stored bytes, with any
    /// member this version of the app does not know (written by a newer one): only the items whose
    /// encoding changed are written anew.
    /// - Complexity: O(n) encodings, n the items shown and edited.
    private func stored(_ typed: [Section]) throws -> [ListSection] {
        // `sections` are decoded from `untyped.sections`, item for item (no decoding error).
        var models: [String: (value: Model, item: ListItem)] = [:]
        var elements: [String: (value: Element, item: ListItem)] = [:]
        for (shown, stored) in zip(sections, untyped.sections) {
            models[stored.model.id] = (shown.model, stored.model)
            for (value, item) in zip(shown.elements, stored.elements) { elements[item.id] = (value, item) }
        }
        func item<T: StorableItem>(_ value: T, _ kept: [String: (value: T, item: ListItem)]) throws -> ListItem {
            let encoded = try _CanonicalJSON.item(value)
            if let kept = kept[encoded.id], try _CanonicalJSON.item(kept.value) == encoded { return kept.item }
            return encoded
        }
        return try typed.map { section in
            ListSection(model: try item(section.model, models), elements: try section.elements.map { try item($0, elements) })
        }
    }

    /// Pushes and pulls (`ReplicaListModel.sync()`).
    @discardableResult
    public func sync() async -> ReplicaSyncResult? { await untyped.sync() }

    /// Syncs in the background until `stop()` (`ReplicaListModel.start(retrying:wait:localPollInterval:)`).
    public func start(
        retrying retry: RetryPolicy = .standard, wait: Duration = .seconds(30), localPollInterval: Duration = .seconds(1)
    ) {
        untyped.start(retrying: retry, wait: wait, localPollInterval: localPollInterval)
    }

    /// Stops the background sync (`ReplicaListModel.stop()`).
    public func stop() { untyped.stop() }

    /// Brings the model up to the replica's head (`ReplicaListModel.refresh()`).
    public func refresh() async { await untyped.refresh() }

    /// Shows a transition of the untyped model in the app's types.
    private func apply(_ transition: ReplicaListModel.Transition) {
        let typed: [Section]
        let changeset: StagedChangeset<Model, Element>
        do {
            typed = try decoder.sections(transition.sections)
            if decodingError == nil {
                changeset = try decoder.changeset(transition.changeset)
            } else {
                changeset = StagedChangeset(source: sections, target: typed)
            }
        } catch {
            decodingError = error
            return
        }
        decodingError = nil
        sections = typed
        let published = Transition(
            changeset: changeset, fromVersion: transition.fromVersion, toVersion: transition.toVersion, sections: typed,
            cause: transition.cause)
        for continuation in subscribers.values { continuation.yield(published) }
    }
}
