/// The FNV-1a 64 fingerprint of an input pair (Docs/Benchmarks.md): the source, the byte 0xFF, then the
/// target. An item is utf8(id) 0x1F int64-LE(content); a section is 0x1E utf8(id) 0x1F int64-LE(content)
/// followed by its items.
struct Fingerprint {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func addByte(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    mutating func add(_ string: String) {
        for byte in string.utf8 { addByte(byte) }
    }

    mutating func addInt64(_ int: Int) {
        let bits = UInt64(bitPattern: Int64(int))
        for shift in stride(from: 0, to: 64, by: 8) { addByte(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
    }

    mutating func add(_ item: Item) {
        add(item.id)
        addByte(0x1F)
        addInt64(item.content)
    }

    mutating func add(_ section: Section) {
        addByte(0x1E)
        add(section.model)
        for item in section.elements { add(item) }
    }

    static func of(source: [Item], target: [Item]) -> Fingerprint {
        var f = Fingerprint()
        for item in source { f.add(item) }
        f.addByte(0xFF)
        for item in target { f.add(item) }
        return f
    }

    static func of(source: [Section], target: [Section]) -> Fingerprint {
        var f = Fingerprint()
        for section in source { f.add(section) }
        f.addByte(0xFF)
        for section in target { f.add(section) }
        return f
    }

    /// 16 lowercase hex digits.
    var hex: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
