import ListDiff
import ListDiffTestSupport
import Testing

/// The hashes the diff pairs identifiers by: wyhash as its reference computes it, equal for equal
/// identifiers (for `String`, canonically equivalent ones), and a diff that stays exact when they
/// collide.
@Suite struct PairingHashTests {
    static func hash(_ text: String, seed: UInt64) -> UInt64 {
        Array(text.utf8).withUnsafeBytes { PairingHashSeed(seed).hash($0) }
    }

    /// The test vectors of wyhash final 4.2 (its `test_vector.cpp`, also in Zig's `std.hash.Wyhash`),
    /// and inputs at the lengths where its code changes path (0–3, 4–16, 17–48, 49–96, 97 bytes).
    @Test func wyhashMatchesTheReferenceVectors() {
        let vectors: [(UInt64, String, UInt64)] = [
            (0, "", 0x0409_638e_e2bd_e459),
            (1, "a", 0xa841_2d09_1b5f_e0a9),
            (2, "abc", 0x32dd_92e4_b291_5153),
            (3, "message digest", 0x8619_1240_89a3_a16b),
            (4, "abcdefghijklmnopqrstuvwxyz", 0x7a43_afb6_1d7f_5f40),
            (5, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 0xff42_329b_90e5_0d58),
            (6, String(repeating: "1234567890", count: 8), 0xc39c_ab13_b115_aad3),
        ]
        for (seed, text, expected) in vectors {
            #expect(Self.hash(text, seed: seed) == expected, "seed \(seed), \(text.utf8.count) bytes")
        }
        let digits = String(repeating: "0123456789", count: 10)
        let lengths: [(String, UInt64)] = [
            ("e0", 0x0645_2170_a5c1_0059), ("e999999", 0xd00b_56d4_ecc0_bd1b), ("K", 0x97a7_7501_e802_57ea),
            ("0123456789abcdef", 0xc304_e72c_387c_d229), ("0123456789abcdefg", 0xb496_f8f3_0660_0195),
            (String(digits.prefix(48)), 0x7146_45b5_7e7f_ee92), (String(digits.prefix(49)), 0xcc9b_6482_5fb6_13df),
            (String(digits.prefix(96)), 0xc852_7a58_bcde_dfa3), (String(digits.prefix(97)), 0xbae4_f83b_f2e6_ff3b),
        ]
        for (text, expected) in lengths {
            #expect(Self.hash(text, seed: 0) == expected, "\(text.utf8.count) bytes")
        }
    }

    /// ASCII strings hash as their bytes; `String` identifiers get the fast hash in a diff.
    @Test func stringIdentifiersPairByTheirBytes() {
        for text in ["", "a", "e0", "e999999", "0123456789abcdefg", String(repeating: "xy", count: 40)] {
            #expect(text.pairingHash(seed: PairingHashSeed(7)) == Self.hash(text, seed: 7))
            #expect(TestItem.pairingHash(of: text, seed: PairingHashSeed(7)) == Int(truncatingIfNeeded: Self.hash(text, seed: 7)))
        }
        // An identifier that is not PairingHashable keeps `hashValue`.
        struct Plain: Differentiable {
            var differenceIdentifier: Int
            func isContentEqual(to source: Plain) -> Bool { true }
        }
        #expect(Plain.pairingHash(of: 42, seed: PairingHashSeed(7)) == 42.hashValue)
    }

    /// KELVIN SIGN is canonically equivalent to "K": `String` says they are equal, so they hash
    /// alike, and a diff pairs them (an update, not a deletion and an insertion).
    @Test func kelvinSignPairsWithCapitalK() throws {
        let pairs = [("\u{212A}", "K"), ("\u{037E}", ";"), ("\u{1FEF}", "`"), ("e\u{212A}x;", "eKx\u{037E}")]
        for (a, b) in pairs {
            #expect(a == b)
            for seed in 0..<UInt64(10) {
                #expect(a.pairingHash(seed: PairingHashSeed(seed)) == b.pairingHash(seed: PairingHashSeed(seed)))
            }
            let source = [TestItem(a, 0)]
            let target = [TestItem(b, 1)]
            let changeset = StagedChangeset(source: source, target: target)
            #expect(changeset.counts.elementUpdated == 1)
            #expect(changeset.counts.elementDeleted == 0 && changeset.counts.elementInserted == 0)
        }
    }

    /// Exactly three non-ASCII scalars make strings equal to one-character ASCII strings, by the
    /// toolchain's own `==`: the ones `String.pairingHash` maps to ASCII.
    @Test(.heavyWork) func onlyThreeNonASCIIScalarsEqualASCIIStrings() {
        let ascii = Dictionary(uniqueKeysWithValues: (0..<128).map { (String(UnicodeScalar(UInt8($0))), $0) })
        var equal = [UInt32]()
        for value in UInt32(0x80)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = String(Character(scalar))
            if let k = ascii[text] {
                equal.append(value)
                #expect(text.pairingHash(seed: .process) == String(UnicodeScalar(UInt8(k))).pairingHash(seed: .process))
            }
        }
        #expect(equal == [0x037E, 0x1FEF, 0x212A])
    }

    /// Random strings over ASCII, the three scalars above and canonically equivalent spellings
    /// (precomposed and decomposed accents, Hangul, combining marks in both orders): every two
    /// equal strings hash alike.
    @Test func canonicallyEquivalentStringsHashAlike() {
        // Each entry: spellings that are canonically equivalent.
        let pieces: [[String]] = [
            ["a"], ["Z"], ["0"], [";", "\u{037E}"], ["`", "\u{1FEF}"], ["K", "\u{212A}"],
            ["\u{E9}", "e\u{301}"], ["\u{C5}", "\u{212B}", "A\u{30A}"], ["\u{AC00}", "\u{1100}\u{1161}"],
            ["q\u{323}\u{307}", "q\u{307}\u{323}"], ["\u{1E69}", "s\u{323}\u{307}", "s\u{307}\u{323}"], ["\u{65E5}"],
        ]
        var random = SplitMix64(seed: 42)
        for round in 0..<5_000 {
            var a = ""
            var b = ""
            for _ in 0..<Int.random(in: 0...12, using: &random) {
                let piece = pieces[Int.random(in: 0..<pieces.count, using: &random)]
                a += piece[Int.random(in: 0..<piece.count, using: &random)]
                b += piece[Int.random(in: 0..<piece.count, using: &random)]
            }
            #expect(a == b, "round \(round)")
            let seed = PairingHashSeed(UInt64(round))
            #expect(a.pairingHash(seed: seed) == b.pairingHash(seed: seed), "round \(round): \(a.debugDescription) \(b.debugDescription)")
        }
    }

    /// Identifiers whose pairing hashes collide (three values, or one for all): the diff checks
    /// each pair against the identifiers, pairs by identifier alone, and stays exact and minimal.
    @Test func collidingPairingHashesStillPairByIdentifier() throws {
        struct CollidingID: PairingHashable {
            let value: Int
            let classes: UInt64
            func pairingHash(seed: PairingHashSeed) -> UInt64 { UInt64(value) % classes }
        }
        struct Row: Differentiable, Equatable {
            let id: CollidingID
            let content: Int
            var differenceIdentifier: CollidingID { id }
            func isContentEqual(to source: Row) -> Bool { content == source.content }
        }
        for seed in 0..<UInt64(400) {
            var rng = SplitMix64(seed: seed)
            let classes: UInt64 = seed % 2 == 0 ? 3 : 1
            let id = { (value: Int) in CollidingID(value: value, classes: classes) }
            let source = (0..<Int.random(in: 0...40, using: &rng)).map { Row(id: id($0), content: 0) }
            var target = source.filter { _ in Int.random(in: 0..<4, using: &rng) != 0 }
            target.shuffle(using: &rng)
            for k in target.indices where Int.random(in: 0..<5, using: &rng) == 0 { target[k] = Row(id: target[k].id, content: 1) }
            target.insert(Row(id: id(1_000), content: 0), at: Int.random(in: 0...target.count, using: &rng))
            let changeset = StagedChangeset(source: source, target: target)
            #expect(try changeset.apply(to: source) == target, "seed \(seed)")
            let wrap = { (rows: [Row]) in [ArraySection(model: LinearSection(), elements: rows)] }
            #expect(changeset.counts == MinimalCounts.of(source: wrap(source), target: wrap(target)), "seed \(seed)")
        }
    }
}
