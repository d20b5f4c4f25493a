/// Reads a JSON object as it arrives, in pieces of any size, and hands over each element of one of
/// its top-level array members (`"commits"` of a journal page) as soon as that element is whole, so
/// that a client never holds an answer's bytes all at once: only the element being read, and the
/// object's other members, kept with the array left empty.
///
/// It only finds where elements start and end (strings, escapes and nesting); the elements and the
/// rest are decoded by `WireDocument` as usual. Elements must be objects.
///
/// ```swift
/// var reader = StreamedArrayReader(member: "commits", maxElementBytes: 64 << 20, maxOtherBytes: 1 << 20)
/// try reader.read(piece) { entry in entries.append(try WireDocument.decodeCommitObject(entry, list: "inbox")) }
/// let rest = try reader.finish()      // {"commits":[],"hasMore":false,"list":"inbox",…}
/// ```
package struct StreamedArrayReader {
    /// Why an answer was refused.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
        /// Whether an element was larger than `maxElementBytes`.
        package var elementTooLarge = false

        package init(description: String, elementTooLarge: Bool = false) {
            self.description = description
            self.elementTooLarge = elementTooLarge
        }
    }

    private let member: [UInt8]
    /// `member`, for messages.
    private let name: String
    private let maxElementBytes: Int
    private let maxOtherBytes: Int

    /// The object's text outside the array's elements.
    private var rest: [UInt8] = []
    /// The element being read.
    private var element: [UInt8] = []
    private var depth = 0
    private var inString = false
    private var escaped = false
    /// The last string read at depth 1 (a member's name), while it is short enough to be `member`.
    private var key: [UInt8]? = []
    private var keyDone = false
    /// Whether the array being read is `member`'s (depth 2 is inside it).
    private var inMember = false
    /// Where the member's array is between elements: just opened, after an element, after a comma.
    private var between = Between.opened

    private enum Between {
        case opened, afterElement, afterComma
    }
    private var started = false

    /// A reader of `member`'s elements, each at most `maxElementBytes`, the rest of the object at
    /// most `maxOtherBytes`.
    package init(member: String, maxElementBytes: Int, maxOtherBytes: Int) {
        self.member = Array(member.utf8)
        name = member
        self.maxElementBytes = maxElementBytes
        self.maxOtherBytes = maxOtherBytes
    }

    /// Reads `bytes`, calling `body` with each element of the array that they complete.
    /// - Throws: `Failure` for an element or a rest over its size, an element that is not an object,
    ///   text that is not an object; what `body` throws.
    /// - Complexity: O(bytes), plus `body`.
    package mutating func read(_ bytes: some Sequence<UInt8>, _ body: ([UInt8]) throws -> Void) throws {
        let done: Void? = try bytes.withContiguousStorageIfAvailable { try read(UnsafeRawBufferPointer($0), body) }
        if done == nil { try Array(bytes).withUnsafeBytes { try read($0, body) } }
    }

    /// Reads `bytes`, as the generic `read(_:_:)` does: an element's bytes are found in runs and
    /// appended a run at a time.
    package mutating func read(_ bytes: UnsafeRawBufferPointer, _ body: ([UInt8]) throws -> Void) throws {
        var i = 0
        while i < bytes.count {
            guard inMember, depth >= 3 || (depth == 2 && bytes[i] == UInt8(ascii: "{")) else {
                try otherByte(bytes[i])
                i += 1
                continue
            }
            if depth == 2, between == .afterElement { throw Failure(description: "two elements of \"\(name)\" without a comma") }
            let start = i
            var ended = false
            while i < bytes.count, !ended {
                let byte = bytes[i]
                i += 1
                if inString {
                    if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    ended = depth == 2
                default: break
                }
            }
            guard element.count + (i - start) <= maxElementBytes else {
                throw Failure(description: "an element of \"\(name)\" is larger than \(maxElementBytes) bytes", elementTooLarge: true)
            }
            element.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<i]))
            if ended {
                try body(element)
                element.removeAll(keepingCapacity: true)
                between = .afterElement
            }
        }
    }

    /// The object's text with the array's elements left out, once the whole object was read.
    /// - Throws: `Failure` when the object is not whole.
    package func finish() throws -> [UInt8] {
        guard started, depth == 0, !inString else { throw Failure(description: "the answer ended before its JSON object did") }
        return rest
    }

    private mutating func otherByte(_ byte: UInt8) throws {
        if depth == 2, inMember {
            // Between the array's elements: blanks, one comma between two, the end. The commas go
            // with the elements.
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                return
            case UInt8(ascii: ","):
                guard between == .afterElement else { throw Failure(description: "a comma out of place in \"\(name)\"") }
                between = .afterComma
                return
            case UInt8(ascii: "]"):
                guard between != .afterComma else { throw Failure(description: "a comma out of place in \"\(name)\"") }
            default:
                throw Failure(description: "an element of \"\(name)\" is not an object")
            }
        }
        rest.append(byte)
        guard rest.count <= maxOtherBytes else { throw Failure(description: "the answer's members are larger than \(maxOtherBytes) bytes") }
        if inString {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
                keyDone = depth == 1
                return
            }
            if depth == 1, key != nil {
                key!.append(byte)
                if key!.count > member.count { key = nil }
            }
            return
        }
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: ":"):
            return
        case UInt8(ascii: "\""):
            inString = true
            if depth == 1 {
                key = []
                keyDone = false
            }
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            if depth == 0 {
                guard byte == UInt8(ascii: "{"), !started else { throw Failure(description: "the answer is not one JSON object") }
                started = true
            }
            if depth == 1, byte == UInt8(ascii: "["), keyDone, key == member {
                inMember = true
                between = .opened
            }
            depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            if depth == 2, inMember { inMember = false }
            depth -= 1
            guard depth >= 0 else { throw Failure(description: "the answer is not one JSON object") }
        default:
            if depth == 0 { throw Failure(description: "the answer is not one JSON object") }
        }
        if depth == 1, byte == UInt8(ascii: ",") {
            key = []
            keyDone = false
        }
    }
}
