/// wyhash, final version 4.2 (Wang Yi's public-domain hash, the one Zig's standard library and Bun
/// ship): two 64 × 64 → 128-bit multiplications for an input of up to 16 bytes. Its outputs match
/// the reference implementation's test vectors (see `PairingHashTests`).
///
/// Not API: `PairingHashSeed.hash(_:)` is.
@usableFromInline
enum _Wyhash {
    @inlinable static var s0: UInt64 { 0xa076_1d64_78bd_642f }
    @inlinable static var s1: UInt64 { 0xe703_7ed1_a0b4_28db }
    @inlinable static var s2: UInt64 { 0x8ebc_6af0_9c88_c6e3 }
    @inlinable static var s3: UInt64 { 0x5899_65cc_7537_4cc3 }

    /// The 128-bit product of `a` and `b`.
    @inlinable @inline(__always)
    static func multiply(_ a: UInt64, _ b: UInt64) -> (low: UInt64, high: UInt64) {
        let (high, low) = a.multipliedFullWidth(by: b)
        return (low, high)
    }

    /// The two halves of the 128-bit product of `a` and `b`, exclusive-ored.
    @inlinable @inline(__always)
    static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = multiply(a, b)
        return product.low ^ product.high
    }

    @inlinable @inline(__always)
    static func read4(_ p: UnsafeRawPointer, _ offset: Int) -> UInt64 {
        UInt64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
    }

    @inlinable @inline(__always)
    static func read8(_ p: UnsafeRawPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// wyhash's first step on a seed (`seed ^ mix(seed ^ s0, s1)`), made once per seed.
    @inlinable
    static func premix(_ seed: UInt64) -> UInt64 {
        seed ^ mix(seed ^ s0, s1)
    }

    /// The wyhash of `bytes` under a `premix`ed seed; with `asciiOnly`, nil as soon as a byte is
    /// 0x80 or above (the words read for a short input cover all of its bytes).
    /// - Complexity: O(n).
    @inlinable @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer, premixed: UInt64, asciiOnly: Bool) -> UInt64? {
        let n = bytes.count
        var seed = premixed
        var a: UInt64 = 0
        var b: UInt64 = 0
        if n <= 16 {
            if n >= 4 {
                let p = bytes.baseAddress!
                let q = (n >> 3) << 2
                a = read4(p, 0) << 32 | read4(p, q)
                b = read4(p, n - 4) << 32 | read4(p, n - 4 - q)
            } else if n > 0 {
                a = UInt64(bytes[0]) << 16 | UInt64(bytes[n >> 1]) << 8 | UInt64(bytes[n - 1])
            }
            if asciiOnly && (a | b) & 0x8080_8080_8080_8080 != 0 { return nil }
        } else {
            let p = bytes.baseAddress!
            if asciiOnly {
                var bits = read8(p, n - 8)
                var offset = 0
                while offset + 8 <= n {
                    bits |= read8(p, offset)
                    offset += 8
                }
                if bits & 0x8080_8080_8080_8080 != 0 { return nil }
            }
            var remaining = n
            var offset = 0
            if remaining > 48 {
                var see1 = seed
                var see2 = seed
                repeat {
                    seed = mix(read8(p, offset) ^ s1, read8(p, offset + 8) ^ seed)
                    see1 = mix(read8(p, offset + 16) ^ s2, read8(p, offset + 24) ^ see1)
                    see2 = mix(read8(p, offset + 32) ^ s3, read8(p, offset + 40) ^ see2)
                    offset += 48
                    remaining -= 48
                } while remaining > 48
                seed ^= see1 ^ see2
            }
            while remaining > 16 {
                seed = mix(read8(p, offset) ^ s1, read8(p, offset + 8) ^ seed)
                remaining -= 16
                offset += 16
            }
            a = read8(p, offset + remaining - 16)
            b = read8(p, offset + remaining - 8)
        }
        let product = multiply(a ^ s1, b ^ seed)
        return mix(product.low ^ s0 ^ UInt64(n), product.high ^ s1)
    }
}
