import ListDiffTestSupport
@testable import ListStoreCore
import Testing

/// The sieve a merge passes the head's identifier hashes through before it looks an identifier up
/// among those its push touches (`_HashSieve`): it never turns away a hash it holds (that would
/// leave a touched content unread), and lets few others through.
struct HashSieveTests {
    /// Over 2,000 random sets of 0 to 5,000 hashes (any bits, negative ones too), every hash held is
    /// a "maybe"; of hashes not held, about one in 16 is, and never more than one in 8 overall.
    @Test func aSieveHoldsEveryHashItWasGivenAndLetsFewOthersThrough() {
        var random = SplitMix64(seed: 0x51E7E)
        var others = 0
        var falseMaybes = 0
        for round in 0..<2_000 {
            let count = round == 0 ? 0 : Int.random(in: 1...5_000, using: &random)
            let held = (0..<count).map { _ in Int(bitPattern: UInt(random.next())) }
            let sieve = _HashSieve(held)
            for hash in held { #expect(sieve.mayHold(hash), "round \(round): \(hash) held but turned away") }
            let kept = Set(held)
            for _ in 0..<100 {
                let hash = Int(bitPattern: UInt(random.next()))
                guard !kept.contains(hash) else { continue }
                others += 1
                if sieve.mayHold(hash) { falseMaybes += 1 }
            }
        }
        #expect(falseMaybes * 8 < others, "\(falseMaybes) of \(others) hashes not held were a maybe")
    }
}
