import Foundation
import ListDiff
import ListJSON

/// A model that the typed API stores: a `Differentiable` value (as DifferenceKit-style models already
/// are) that is also `Codable`. Its content is stored as canonical JSON of the whole value; its id is
/// `storedID`.
///
/// ```swift
/// struct Message: StorableItem {
///     var id: String
///     var text: String
///     var differenceIdentifier: String { id }
///     func isContentEqual(to source: Message) -> Bool { text == source.text }
/// }
/// try store.commit([ArraySection(model: Folder(id: "inbox"), elements: messages)], to: "mail")
/// let sections = try store.snapshot(of: "mail", as: ArraySection<Folder, Message>.self)
/// ```
public protocol StorableItem: Differentiable, Codable, SendableMetatype {
    /// The id the store keeps: by default `String(describing: differenceIdentifier)`.
    var storedID: String { get }
}

extension StorableItem {
    /// `String(describing: differenceIdentifier)`.
    public var storedID: String { String(describing: differenceIdentifier) }
}

/// Canonical JSON for Codable values: encode, then write the value again with sorted keys, no
/// whitespace and numbers as written.
package enum _CanonicalJSON {
    package static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try JSONParser().parse(try encoder.encode(value)).serializedBytes()
        } catch {
            throw StoreError(.invalidSnapshot, "cannot encode \(T.self) as JSON: \(error)")
        }
    }

    package static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], what: @autoclosure () -> String) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch {
            throw StoreError(.invalidSnapshot, "\(what()) does not decode as \(T.self): \(error)")
        }
    }

    package static func item<T: StorableItem>(_ value: T) throws -> ListItem {
        ListItem(id: value.storedID, content: try encode(value))
    }
}
