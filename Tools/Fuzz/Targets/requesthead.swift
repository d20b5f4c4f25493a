// libFuzzer target `requesthead`: the HTTP/1.1 request heads the server reads in front of its HTTP
// decoder (`PlainRequestHead`, compiled in from Sources/ListStoreServer). Whatever the bytes, the
// reading ends without a crash; a head read ends at the first empty line, is read the same from its
// own bytes, and every shorter prefix of it is incomplete; bytes that are not a head stay so however
// many bytes follow.
// fuzz-sources: Sources/ListStoreServer/PlainRequestHead.swift

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestHead(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: count)
    let limit = 4_096
    let parsed = PlainRequestHead.parse(bytes, limit: limit)
    switch parsed {
    case .head(let head):
        guard head.length >= 16, head.length <= count, head.length <= limit else { fatalError("a head's length outside its bytes") }
        let end = Array(bytes[(head.length - 4)..<head.length])
        guard end == Array("\r\n\r\n".utf8) else { fatalError("a head that does not end with an empty line") }
        let before = Array(bytes[0..<(head.length - 2)])
        for i in 0..<(before.count - 3) where before[i] == 13 && before[i + 1] == 10 && before[i + 2] == 13 && before[i + 3] == 10 {
            fatalError("a head read past its first empty line")
        }
        guard PlainRequestHead.parse(UnsafeRawBufferPointer(rebasing: bytes[0..<head.length]), limit: limit) == parsed else {
            fatalError("a head read differently from its own bytes")
        }
        for cut in stride(from: 0, to: head.length, by: max(1, head.length / 8)) {
            guard PlainRequestHead.parse(UnsafeRawBufferPointer(rebasing: bytes[0..<cut]), limit: limit) == .incomplete else {
                fatalError("a prefix of a head is not incomplete")
            }
        }
        guard head.target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), !head.method.isEmpty else { fatalError("a method or target not plain") }
    case .unsupported:
        // More bytes do not make a head of them.
        var longer = Array(bytes)
        longer += Array("\r\n\r\n".utf8)
        if count < limit, case .head = longer.withUnsafeBytes({ PlainRequestHead.parse($0, limit: limit) }) {
            fatalError("bytes refused became a head with more bytes")
        }
    case .incomplete:
        guard count < limit else { fatalError("incomplete at the limit") }
    }
    return 0
}
