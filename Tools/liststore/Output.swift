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

    /// Rows with columns padded to the widest cell (the last column is not padded); every cell is
    /// made `printable` first.
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        let all = ([header] + rows).map { $0.map(printable) }
        var widths = [Int](repeating: 0, count: header.count)
        for row in all { for (k, cell) in row.enumerated() { widths[k] = max(widths[k], cell.count) } }
        return all.map { row in
            row.enumerated().map { k, cell in
                k == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[k] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    /// `text` with every character that could drive a terminal or disguise what is shown written as
    /// a `\u{…}` escape: C0 and C1 controls (line breaks and ESC among them), DEL, the line and
    /// paragraph separators and the bidirectional formatting characters. Names, authors and messages
    /// come from stores and servers that other people write to; they must not forge lines, move
    /// the cursor or reorder the text around them.
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A name between single quotes, `printable`.
    static func quoted(_ name: String) -> String { "'" + printable(name) + "'" }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// The first 12 digits of a digest.
    static func short(_ digest: ListDigest) -> String { String(digest.hex.prefix(12)) }
}
