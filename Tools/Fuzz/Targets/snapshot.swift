// libFuzzer target `snapshot`: snapshot documents. What decodes encodes to a document that decodes
// to the same sections; everything else is refused with an error.
import ListJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSnapshot(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: count)
    guard let value = try? JSONParser().parse(bytes), let document = try? SnapshotDocument(decoding: value) else { return 0 }
    let text = document.serializedBytes()
    guard let again = try? SnapshotDocument(decoding: JSONParser().parse(text)) else {
        fatalError("the encoding of a decoded snapshot does not decode")
    }
    guard again.sections == document.sections else { fatalError("a snapshot does not survive its encoding") }
    return 0
}
