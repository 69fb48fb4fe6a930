/// ASCII-only case folding: header names and tokens are ASCII, and locale-aware
/// lowercasing would be both slow and wrong (think Turkish dotless i).
public enum ASCIICase {
    /// Two field names or tokens: usually written in the same case, so an exact match is
    /// tried first; otherwise the contiguous UTF-8 is compared byte by byte.
    public static func equal(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        var a = a, b = b
        return a.withUTF8 { left in
            b.withUTF8 { right in
                guard left.count == right.count else { return false }
                for index in 0..<left.count where lower(left[index]) != lower(right[index]) { return false }
                return true
            }
        }
    }

    public static func equal(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case let (x?, y?): if lower(x) != lower(y) { return false }
            default: return false
            }
        }
    }

    /// Bytes equal to a name or token, ignoring ASCII case.
    public static func equal<Bytes: Collection<UInt8>>(_ bytes: Bytes, _ other: String.UTF8View) -> Bool {
        guard bytes.count == other.count else { return false }
        // Every name the code spells is a native string and every received name lies in an
        // array: compared through pointers, not the UTF-8 view's index walk (a field lookup
        // runs this for every field, several lookups per message).
        if let result = other.withContiguousStorageIfAvailable({ expected in
            bytes.withContiguousStorageIfAvailable { equalBuffers($0, expected) }
        }), let result {
            return result
        }
        var index = bytes.startIndex
        for expected in other {
            if lower(bytes[index]) != lower(expected) { return false }
            bytes.formIndex(after: &index)
        }
        return true
    }

    /// Two buffers of the same length, ignoring ASCII case.
    @inlinable
    public static func equal(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        equalBuffers(left, right)
    }

    @inlinable
    static func equalBuffers(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        for index in 0..<left.count where lower(left[index]) != lower(right[index]) { return false }
        return true
    }

    /// `body` given the UTF-8 of `text`: its own storage when it has one (a literal, a native
    /// string), else a copy.
    static func withBytes<R>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        var text = text
        return text.withUTF8(body)
    }

    /// Whether two byte strings are the same, ignoring ASCII case (lengths compared first).
    static func sameIgnoringCase(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        left.count == right.count && equalBuffers(left, right)
    }

    /// Whether `bytes` spell `literal`, ignoring ASCII case.
    static func sameIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        sameIgnoringCase(bytes, UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    public static func lowercased(_ s: some StringProtocol) -> String {
        String(decoding: s.utf8.map(lower), as: UTF8.self)
    }

    @inline(__always) public static func lower(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
    }
}
