/// A JSON object: unique keys, kept sorted by Unicode code point (= UTF-8 byte) order.
///
/// Because the order is canonical, two objects are equal exactly when they hold the same keys with
/// equal values, whatever order the input listed them in. Keys are compared by their exact UTF-8
/// bytes (never by Unicode canonical equivalence), so `"\u{E9}"` and `"e\u{301}"` are two keys.
///
/// ```swift
/// var object: JSONObject = ["b": 2, "a": 1]
/// object.keys              // ["a", "b"]
/// object["c"] = "x"        // inserts, keeping the order
/// object["a"] = nil        // removes
/// ```
public struct JSONObject: Hashable, Sendable, RandomAccessCollection, ExpressibleByDictionaryLiteral,
    CustomStringConvertible
{
    /// A key and its value.
    public typealias Element = (key: String, value: JSONValue)
    /// Positions of members in key order.
    public typealias Index = Int

    /// Members in key order.
    private(set) var members: [_JSONMember]

    /// Creates an empty object.
    public init() {
        members = []
    }

    /// Creates an object from members already sorted by key bytes with no duplicate.
    init(sortedUniqueMembers members: [_JSONMember]) {
        assert(zip(members, members.dropFirst()).allSatisfy { _UTF8Bytes.compare($0.key, $1.key) < 0 },
               "JSONObject: members out of order")
        self.members = members
    }

    /// Creates an object from key-value pairs in any order.
    ///
    /// - Precondition: no key occurs twice (like `Dictionary(uniqueKeysWithValues:)`); use
    ///   `init(_:uniquingKeysWith:)` when keys may repeat.
    /// - Complexity: O(n log n).
    public init(uniqueKeysWithValues pairs: some Sequence<(String, JSONValue)>) {
        self.init(pairs) { _, _ in preconditionFailure("JSONObject: duplicate key") }
    }

    /// Creates an object from key-value pairs in any order; for a repeated key, `combine` receives the
    /// value kept so far and the new one and returns the value to keep.
    /// - Complexity: O(n log n).
    public init(
        _ pairs: some Sequence<(String, JSONValue)>,
        uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue
    ) rethrows {
        var list: [_JSONMember] = pairs.map { _JSONMember($0.0, $0.1) }
        var sorted = true
        var i = 1
        while i < list.count {
            if _UTF8Bytes.compare(list[i - 1].key, list[i].key) >= 0 {
                sorted = false
                break
            }
            i += 1
        }
        if sorted {
            members = list
            return
        }
        // A stable sort keeps equal keys in input order, so `combine` sees them first to last.
        let order = list.indices.sorted { a, b in
            let c = _UTF8Bytes.compare(list[a].key, list[b].key)
            return c != 0 ? c < 0 : a < b
        }
        var result: [_JSONMember] = []
        result.reserveCapacity(list.count)
        for k in order {
            if let last = result.last, _UTF8Bytes.equal(last.key, list[k].key) {
                result[result.count - 1].value = try combine(last.value, list[k].value)
            } else {
                result.append(list[k])
            }
        }
        list = []
        members = result
    }

    /// Creates an object from a dictionary literal.
    /// - Precondition: no key occurs twice.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(uniqueKeysWithValues: elements)
    }

    /// The index of the first member.
    public var startIndex: Int { 0 }
    /// The index past the last member.
    public var endIndex: Int { members.count }
    /// The member at `position`, in key order.
    public subscript(position: Int) -> Element {
        let member = members[position]
        return (member.key, member.value)
    }

    /// The keys in order.
    public var keys: [String] { members.map(\.key) }
    /// The values in key order.
    public var values: [JSONValue] { members.map(\.value) }

    /// The value for `key`, or `nil` when the object has no such key; assigning `nil` removes the key.
    ///
    /// - Complexity: O(log n) to read; O(n) to insert or remove.
    public subscript(key: String) -> JSONValue? {
        get {
            let (index, found) = search(key)
            return found ? members[index].value : nil
        }
        set {
            let (index, found) = search(key)
            switch (found, newValue) {
            case (true, let value?): members[index].value = value
            case (true, nil): members.remove(at: index)
            case (false, let value?): members.insert(_JSONMember(key, value), at: index)
            case (false, nil): break
            }
        }
    }

    /// Binary search by key bytes: the position of `key`, or where it would be inserted.
    private func search(_ key: String) -> (index: Int, found: Bool) {
        _UTF8Bytes.with(key) { target in
            var low = 0
            var high = members.count
            while low < high {
                let mid = (low + high) / 2
                let c = _UTF8Bytes.with(members[mid].key) { _UTF8Bytes.compare($0, target) }
                if c == 0 { return (mid, true) }
                if c < 0 { low = mid + 1 } else { high = mid }
            }
            return (low, false)
        }
    }

    /// Whether both objects hold the same keys (byte for byte) with equal values.
    /// - Complexity: O(size of both objects).
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        for (a, b) in zip(lhs.members, rhs.members) {
            guard _UTF8Bytes.equal(a.key, b.key), a.value == b.value else { return false }
        }
        return true
    }

    /// Hashes the keys' bytes and the values in order.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(members.count)
        for member in members {
            _UTF8Bytes.hash(member.key, into: &hasher)
            member.value.hash(into: &hasher)
        }
    }

    /// The canonical JSON text of the object.
    public var description: String { JSONValue.object(self).serialized() }
}

/// A key and its value, as stored in a `JSONObject` (a struct rather than a tuple: cheaper to create
/// and destroy in bulk).
struct _JSONMember: Sendable {
    var key: String
    var value: JSONValue

    @inline(__always)
    init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}
