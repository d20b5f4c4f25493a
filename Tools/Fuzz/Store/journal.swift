// libFuzzer target `journal`: journal documents (`log --json`, `GET …/journal`) and push documents
// (`POST …/pushes`) as a client and the server decode them. What decodes encodes to a document that
// decodes to the same page or push; everything else is refused with an error.
// Built through Tools/Fuzz/Package.swift (it needs ListStore), with testing enabled: `WireDocument` is
// package-visible, and the harness is of another package.
import ListStore
@testable import ListStoreWire

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJournal(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    if let page = try? WireDocument.decodeJournal(bytes) {
        let list = page.entries.first?.list ?? ""
        guard page.entries.allSatisfy({ $0.list == list }) else { fatalError("a journal page of several lists") }
        guard let again = try? WireDocument.decodeJournal(WireDocument.journal(page, list: list)) else {
            fatalError("the encoding of a decoded journal page does not decode")
        }
        guard again == page else { fatalError("a journal page does not survive its encoding") }
        for entry in page.entries {
            guard let one = try? WireDocument.decodeCommitObject(WireDocument.commitObject(entry), list: list), one == entry else {
                fatalError("a journal entry does not survive its encoding as an event")
            }
        }
    }
    if let push = try? WireDocument.decodePush(bytes) {
        guard let again = try? WireDocument.decodePush(WireDocument.push(push)) else {
            fatalError("the encoding of a decoded push does not decode")
        }
        guard again == push else { fatalError("a push does not survive its encoding") }
    }
    return 0
}
