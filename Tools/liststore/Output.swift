import ListJSON
import ListStore

/// Helpers for the two kinds of output: one JSON document, and aligned tables for people.
enum Output {
    /// Prints one JSON document with `"schemaVersion": 1` added.
    static func json(_ members: [String: JSONValue]) {
        var object = JSONObject()
        object["schemaVersion"] = 1
        for (key, value) in members { object[key] = value }
        Terminal.out(JSONValue.object(object).serialized() + "\n")
    }

    /// Rows with columns padded to the widest cell (the last column is not padded).
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        let all = [header] + rows
        var widths = [Int](repeating: 0, count: header.count)
        for row in all { for (k, cell) in row.enumerated() { widths[k] = max(widths[k], cell.count) } }
        return all.map { row in
            row.enumerated().map { k, cell in
                k == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[k] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    /// The first 12 digits of a digest.
    static func short(_ digest: ListDigest) -> String { String(digest.hex.prefix(12)) }
}
