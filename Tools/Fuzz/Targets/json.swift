// libFuzzer target `json`: the JSON parser. Whatever it parses serializes to text that parses back
// to the same value; whatever it refuses, it refuses with an error, never a crash.
import ListJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: count)
    guard let value = try? JSONParser().parse(bytes) else { return 0 }
    let text = value.serializedBytes()
    guard let again = try? JSONParser().parse(text) else { fatalError("the serialization of a parsed value does not parse") }
    guard again == value else { fatalError("a parsed value does not survive its serialization") }
    guard again.serializedBytes() == text else { fatalError("serialization is not canonical") }
    return 0
}
