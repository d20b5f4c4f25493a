import Testing

@testable import ListStoreCore

/// A row of the record of pushes read from a store is checked before it answers anything: one that
/// does not hold one fingerprint for each push it stands for is refused as damaged, whatever its
/// numbers (a damaged file can hold any integer), never trapped on.
@Suite struct PushRecordTests {
    private static let fingerprint = [UInt8](repeating: UInt8(ascii: "a"), count: 64)

    @Test func aRowWithOneFingerprintPerPushIsRead() throws {
        let run = try PushRecord(
            client: "c", seq: 7, coversFrom: 5, version: 3, conflicts: [], fingerprints: Array(repeating: Self.fingerprint, count: 3).flatMap { $0 },
            pushedAt: "now")
        #expect(run.seq == 7 && run.coversFrom == 5)
        _ = try PushRecord(client: "c", seq: 1, version: 1, conflicts: [], fingerprints: Self.fingerprint, pushedAt: "now")
    }

    @Test(arguments: [
        (5, Int?.some(6), 64),  // a run that ends before it starts
        (5, Int?.some(Int.min), 64),  // numbers whose span overflows
        (Int.max, Int?.some(Int.min), 64),
        (Int.max, Int?.some(-1), 0),
        (5, Int?.some(4), 64),  // one fingerprint for two pushes
        (5, nil, 128),  // two for one push
    ])
    func aDamagedRowIsRefusedNotTrappedOn(seq: Int, coversFrom: Int?, digits: Int) {
        #expect(throws: StoreError.self) {
            try PushRecord(
                client: "c", seq: seq, coversFrom: coversFrom, version: 1, conflicts: [],
                fingerprints: [UInt8](repeating: UInt8(ascii: "0"), count: digits), pushedAt: "now")
        }
    }

    @Test func aFingerprintThatIsNotHexadecimalIsRefused() {
        var digits = Self.fingerprint
        digits[10] = UInt8(ascii: "g")
        #expect(throws: StoreError.self) {
            try PushRecord(client: "c", seq: 1, version: 1, conflicts: [], fingerprints: digits, pushedAt: "now")
        }
    }
}
