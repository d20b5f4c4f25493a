// libFuzzer target `stages`: stage documents and stage application. The input is a snapshot
// document, a newline, and a list of stages; stages that decode against the snapshot apply to it
// (`decodeStages` applies them), and their encoding decodes and applies to the same result.
// Stages that do not fit are refused with an error, never a crash.
import ListJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStages(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: count)
    guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")),
        let snapshot = try? SnapshotDocument(decoding: JSONParser().parse(bytes[..<newline])),
        let json = try? JSONParser().parse(bytes[(newline + 1)...]),
        let (changeset, result) = try? StageDocument.decodeStages(json, applyingTo: snapshot.sections)
    else { return 0 }
    guard let applied = try? changeset.apply(to: snapshot.sections), applied == result else {
        fatalError("decoded stages do not apply to what decoding them gave")
    }
    let encoded = StageDocument.encode(stages: changeset)
    guard let (_, again) = try? StageDocument.decodeStages(JSONParser().parse(encoded.serializedBytes()), applyingTo: snapshot.sections),
        again == result
    else { fatalError("encoded stages do not decode to the same result") }
    return 0
}
