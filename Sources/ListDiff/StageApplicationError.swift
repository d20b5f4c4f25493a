/// The reason a stage could not be applied to a snapshot: the stage does not fit the snapshot, or it
/// breaks the stage contract. Applying never crashes on a bad stage; it throws this error.
public struct StageApplicationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public struct Reason: Hashable, Sendable, CustomStringConvertible {
        @usableFromInline enum Code: Hashable, Sendable {
            case indexOutOfRange, removedTwice, placedTwice, sectionConflict
        }
        @usableFromInline let code: Code

        @inlinable init(_ code: Code) { self.code = code }

        /// An index does not address an item of the state it refers to.
        public static let indexOutOfRange = Reason(.indexOutOfRange)
        /// An item is deleted or moved away twice in one stage.
        public static let removedTwice = Reason(.removedTwice)
        /// Two items are placed at the same index in one stage.
        public static let placedTwice = Reason(.placedTwice)
        /// An element operation addresses a section that the same stage deletes, inserts, moves or updates.
        public static let sectionConflict = Reason(.sectionConflict)

        public var description: String {
            switch code {
            case .indexOutOfRange: "index out of range"
            case .removedTwice: "item removed twice"
            case .placedTwice: "two items placed at one index"
            case .sectionConflict: "element operation in a section changed by the same stage"
            }
        }
    }

    /// What went wrong.
    public var reason: Reason
    /// The zero-based index of the stage in its changeset, when known.
    public var stage: Int?
    /// The operation that failed, in words.
    public var detail: String

    /// Creates an error.
    @inlinable
    public init(_ reason: Reason, stage: Int? = nil, detail: String) {
        self.reason = reason
        self.stage = stage
        self.detail = detail
    }

    public var description: String {
        let place = stage.map { "stage \($0 + 1): " } ?? ""
        return "\(place)\(reason): \(detail)"
    }
}
