/// Finding a short byte string in a longer one (a head's stored bytes, a target).
public enum ByteSearch {
    /// The first index at which `needle` starts in `haystack`, if anywhere. Inlinable, so a
    /// caller in another module gets it specialized for its collection (unspecialized, it
    /// looked up generic metadata on every request).
    @inlinable
    public static func firstRange<Bytes: Collection>(of needle: [UInt8], in haystack: Bytes, from start: Bytes.Index? = nil) -> Range<Bytes.Index>?
    where Bytes.Element == UInt8 {
        guard let first = needle.first else { return nil }
        var index = start ?? haystack.startIndex
        while let candidate = haystack[index...].firstIndex(of: first) {
            var probe = candidate, matched = 0
            while matched < needle.count, probe < haystack.endIndex, haystack[probe] == needle[matched] {
                matched += 1
                probe = haystack.index(after: probe)
            }
            if matched == needle.count { return candidate..<probe }
            index = haystack.index(after: candidate)
        }
        return nil
    }

    /// Whether `needle` occurs in contiguous bytes. Eight starts are tried at a time, on both
    /// the needle's first and last bytes (every forwarded request's stored fields are searched
    /// for the placeholder marker: byte by byte that cost ~350 instructions, and stopping at
    /// each of the first byte alone, common in field text, ~250).
    public static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        let length = needle.count
        guard length > 0, length <= haystack.count else { return false }
        let starts = haystack.count - length + 1
        guard starts >= 8 else {
            return (0..<starts).contains { matches(haystack, needle, at: $0) }
        }
        let first = ones &* UInt64(needle[0]), last = ones &* UInt64(needle[length - 1])
        var start = 0
        while true {
            // The last step overlaps the one before rather than going byte by byte.
            start = min(start, starts - 8)
            // Its word of last bytes ends at `start + length + 6`, within the haystack.
            var marks = zeroByteMarks(word(haystack, start) ^ first) & zeroByteMarks(word(haystack, start + length - 1) ^ last)
            while marks != 0 {
                if matches(haystack, needle, at: start + marks.trailingZeroBitCount / 8) { return true }
                marks &= marks &- 1
            }
            if start == starts - 8 { return false }
            start += 8
        }
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101

    /// The eight bytes at `at`, the first of them in the low byte.
    @inline(__always) private static func word(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt64 {
        UInt64(littleEndian: bytes.baseAddress.unsafelyUnwrapped.loadUnaligned(fromByteOffset: at, as: UInt64.self))
    }

    /// The high bit of exactly each zero byte of `word` (no carry crosses into the next byte).
    @inline(__always) private static func zeroByteMarks(_ word: UInt64) -> UInt64 {
        let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        return ~((((word & low7) &+ low7) | word) | low7)
    }

    private static func matches(_ haystack: UnsafeRawBufferPointer, _ needle: [UInt8], at start: Int) -> Bool {
        var index = 0
        while index < needle.count, haystack[start + index] == needle[index] { index += 1 }
        return index == needle.count
    }

    @inlinable
    public static func contains<Bytes: Collection>(_ haystack: Bytes, _ needle: [UInt8]) -> Bool where Bytes.Element == UInt8 {
        firstRange(of: needle, in: haystack) != nil
    }
}
