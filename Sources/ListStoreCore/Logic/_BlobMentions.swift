import ListJSON
import ListMerge

/// The blobs that documents and changes refer to, as a prune and a push need them.
///
/// Not API: package-visible for the engines and the sync client.
package enum _BlobMentions {
    /// The blobs JSON document `document` refers to anywhere in it (a snapshot document, a journal
    /// entry's stages); `nil` when that is unknown: the document does not parse, or holds an object
    /// with the key `"$blob"` that is not a reference.
    /// - Complexity: O(document.count).
    package static func hashes(inDocument document: [UInt8]) -> Set<ContentHash>? {
        guard BlobReference.mayAppear(in: document) else { return [] }
        guard let value = try? JSONParser().parse(document) else { return nil }
        var found = Set<ContentHash>()
        do {
            try BlobReference.collect(value) { found.insert($0.hash) }
        } catch {
            return nil
        }
        return found
    }

    /// The blobs that the contents `intents` bring (inserted and updated) refer to, each once, in
    /// the order they first appear.
    /// - Throws: `StoreError.invalidSnapshot` for an object with the key `"$blob"` that is not a
    ///   blob reference.
    package static func references(in intents: [Intent]) throws(StoreError) -> [BlobReference] {
        var (found, seen) = ([BlobReference](), Set<ContentHash>())
        func take(_ content: JSONValue) throws(StoreError) {
            try BlobReference.collect(content) { reference in
                if seen.insert(reference.hash).inserted { found.append(reference) }
            }
        }
        for intent in intents {
            switch intent {
            case .insertSection(_, let content, let elements, _, _):
                try take(content)
                for element in elements { try take(element.content) }
            case .updateSection(_, _, let content), .insertElement(_, let content, _, _, _), .updateElement(_, _, _, let content):
                try take(content)
            case .deleteSection, .moveSection, .deleteElement, .moveElement:
                break
            }
        }
        return found
    }
}
