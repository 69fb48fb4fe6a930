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

    /// Whether `needle` occurs in contiguous bytes: its first byte is looked for eight bytes at
    /// a time (every forwarded request's stored fields are searched for the placeholder marker,
    /// and byte by byte that cost ~350 instructions).
    public static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, needle.count <= haystack.count else { return false }
        let lastStart = haystack.count - needle.count
        var index = 0
        while true {
            index = ByteScan.firstIndex(of: first, in: haystack, from: index, limit: lastStart + 1)
            guard index <= lastStart else { return false }
            var matched = 1
            while matched < needle.count, haystack[index + matched] == needle[matched] { matched += 1 }
            if matched == needle.count { return true }
            index += 1
        }
    }

    @inlinable
    public static func contains<Bytes: Collection>(_ haystack: Bytes, _ needle: [UInt8]) -> Bool where Bytes.Element == UInt8 {
        firstRange(of: needle, in: haystack) != nil
    }
}
