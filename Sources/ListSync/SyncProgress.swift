/// How far a replica's first sync or resync in pages has got (ListStoreCore's article "Lists of Any
/// Size"): the records (sections and elements) landed in the replica's store out of the list's
/// total at the version being copied. Exact: every page names the list's totals.
///
/// ```swift
/// var options = Replica.PullOptions()
/// options.onProgress = { progress in print("\(Int(progress.fractionCompleted * 100))%", progress.elements, "of", progress.totalElements) }
/// ```
/// In SwiftUI, `ProgressView(value: progress.fractionCompleted)`; the observable models publish it
/// as `status.progress`.
public struct SyncProgress: Sendable, Hashable {
    /// The replica list.
    public var list: String
    /// The source version being copied.
    public var version: Int
    /// Elements landed so far.
    public var elements: Int
    /// The list's elements at `version`.
    public var totalElements: Int
    /// Records (sections and elements) landed so far.
    public var records: Int
    /// The list's records at `version`.
    public var totalRecords: Int
    /// About the bytes landed so far (ids and contents).
    public var bytes: Int
    /// Why the replica copies in pages: `firstSync`, or a `ResyncReason`'s raw value.
    public var reason: String
    /// Whether the sync went on from pages an earlier, interrupted one landed.
    public var resumed: Bool

    /// The share landed, from 0 to 1 (1 for an empty list).
    public var fractionCompleted: Double {
        totalRecords == 0 ? 1 : Double(records) / Double(totalRecords)
    }

    /// A progress report.
    public init(
        list: String, version: Int, elements: Int, totalElements: Int, records: Int, totalRecords: Int, bytes: Int, reason: String,
        resumed: Bool
    ) {
        self.list = list
        self.version = version
        self.elements = elements
        self.totalElements = totalElements
        self.records = records
        self.totalRecords = totalRecords
        self.bytes = bytes
        self.reason = reason
        self.resumed = resumed
    }
}
