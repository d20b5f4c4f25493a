import ListDiff
import ListJSON

/// Loads a snapshot document from a file, with the documented failures.
enum SnapshotFile {
    /// The sections of the snapshot document at `path` (`-` for standard input), as items of the
    /// caller's type (JSON items for `diff`, stored items for `commit`).
    ///
    /// - Throws: `CommandFailure`: 66 when the file cannot be read, 65 when it is not a valid
    ///   snapshot document (malformed or non-UTF-8 JSON, wrong types, missing ids, absurd nesting).
    static func load<Item: JSONDocumentItem>(_ path: String) throws -> [ArraySection<Item, Item>] {
        let bytes = try InputFile.read(path)
        let name = path == "-" ? "standard input" : path
        do {
            return try SnapshotDocument.sections(decoding: JSONValue(parsing: bytes))
        } catch let error as JSONParseError {
            throw CommandFailure("\(name): invalid JSON: \(error)", status: ExitStatus.invalidData)
        } catch let error as DocumentError {
            throw CommandFailure("\(name): not a snapshot document: \(error)", status: ExitStatus.invalidData)
        }
    }
}
