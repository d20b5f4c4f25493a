// libFuzzer target `intents`: the intents of a push (a replica's offline changes) and
// their rebase. The input is a snapshot document, a newline, and a JSON array of intents; intents
// that decode encode to JSON that decodes to the same intents, and rebase onto the snapshot without
// a crash, to a snapshot whose document decodes to it again. Anything else is refused with an error.
import ListJSON
import ListMerge

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIntents(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: count)
    guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")),
        let snapshot = try? SnapshotDocument(decoding: JSONParser().parse(bytes[..<newline])),
        let json = try? JSONParser().parse(bytes[(newline + 1)...]),
        let intents = try? Intent.intents(decoding: json)
    else { return 0 }
    let encoded = Intent.jsonValue(intents).serializedBytes()
    guard let again = try? Intent.intents(decoding: JSONParser().parse(encoded)), again == intents else {
        fatalError("intents do not survive their encoding")
    }
    let merged = Rebase(intents, onto: snapshot.sections).snapshot
    let document = SnapshotDocument(sections: merged).serializedBytes()
    guard let decoded = try? SnapshotDocument(decoding: JSONParser().parse(document)), decoded.sections == merged else {
        fatalError("a rebased snapshot does not survive its encoding")
    }
    return 0
}
