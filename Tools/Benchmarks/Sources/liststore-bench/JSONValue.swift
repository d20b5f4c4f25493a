/// A JSON value, written by hand with sorted object keys (no Foundation needed).
enum JSONValue {
    case int(Int)
    /// A number printed with a fixed number of decimals.
    case number(Double, decimals: Int)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Compact JSON text; object keys in ascending order.
    var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    func write(to out: inout String) {
        switch self {
        case .int(let value):
            out += String(value)
        case .number(let value, let decimals):
            out += value.isFinite ? Format.fixed(value, decimals: decimals) : "null"
        case .string(let value):
            Self.writeString(value, to: &out)
        case .array(let values):
            out += "["
            for (k, value) in values.enumerated() {
                if k > 0 { out += "," }
                value.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (k, key) in members.keys.sorted().enumerated() {
                if k > 0 { out += "," }
                Self.writeString(key, to: &out)
                out += ":"
                members[key]!.write(to: &out)
            }
            out += "}"
        }
    }

    private static func writeString(_ string: String, to out: inout String) {
        out += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

/// Number formatting without Foundation.
enum Format {
    /// `value` rounded to `decimals` places, e.g. fixed(3.14159, decimals: 2) == "3.14".
    static func fixed(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9e18 else { return String(value) }
        let units = UInt64(scaled)
        let integer = units / UInt64(scale)
        let sign = value < 0 && units != 0 ? "-" : ""
        guard decimals > 0 else { return sign + String(integer) }
        let fraction = String(units % UInt64(scale))
        return sign + String(integer) + "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }

    /// A measured ratio: two decimals below 10 (the store scenarios' ratios are near 1), one from 10 up.
    static func ratio(_ value: Double) -> String {
        fixed(value, decimals: abs(value) < 10 ? 2 : 1)
    }
}
