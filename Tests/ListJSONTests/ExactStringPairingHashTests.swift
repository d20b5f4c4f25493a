import ListDiff
import ListJSON
import Testing

/// `ExactString` identifiers pair by their exact bytes: wyhash of the UTF-8 bytes, and
/// canonically equivalent spellings are different identifiers.
@Suite struct ExactStringPairingHashTests {
    struct Row: Differentiable, Equatable {
        let id: ExactString
        let content: Int
        var differenceIdentifier: ExactString { id }
        func isContentEqual(to source: Row) -> Bool { content == source.content }
    }

    @Test func exactStringsHashTheirBytes() {
        // wyhash final 4.2, seed 0, of "é" (c3 a9) and of "K".
        #expect(ExactString("\u{E9}").pairingHash(seed: PairingHashSeed(0)) == 0x18c0_2423_8894_ecca)
        #expect(ExactString("K").pairingHash(seed: PairingHashSeed(0)) == 0x97a7_7501_e802_57ea)
        #expect(Row.pairingHash(of: "K", seed: PairingHashSeed(0)) == Int(truncatingIfNeeded: 0x97a7_7501_e802_57ea as UInt64))
    }

    /// KELVIN SIGN and "K" are equal `String`s, but different `ExactString`s: one is deleted, the
    /// other inserted.
    @Test func kelvinSignIsNotCapitalK() {
        let changeset = StagedChangeset(source: [Row(id: "\u{212A}", content: 0)], target: [Row(id: "K", content: 0)])
        #expect(changeset.counts.elementDeleted == 1 && changeset.counts.elementInserted == 1)
        #expect(changeset.counts.elementUpdated == 0)
        let precomposed = StagedChangeset(source: [Row(id: "\u{E9}", content: 0)], target: [Row(id: "e\u{301}", content: 1)])
        #expect(precomposed.counts.elementDeleted == 1 && precomposed.counts.elementInserted == 1)
    }
}
