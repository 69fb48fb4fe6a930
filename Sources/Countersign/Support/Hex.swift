/// Lower-case hexadecimal: Digest puts it on the wire, digests of replayed bodies and test vectors are written in it.
public enum Hex {
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        if let text = bytes.withContiguousStorageIfAvailable({ encode(UnsafeRawBufferPointer($0)) }) { return text }
        return encode(Array(bytes))
    }

    /// Arrays (every caller but one) without going through the generic path.
    public static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { encode($0) }
    }

    /// Written straight into the new string's storage: Digest hexes several hashes per answer.
    public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            for (index, byte) in bytes.enumerated() {
                out[2 * index] = hexDigit(byte >> 4)
                out[2 * index + 1] = hexDigit(byte & 0x0f)
            }
            return bytes.count * 2
        }
    }

    /// Appends the lower-case hex of `bytes` to `out` (a header value being built as bytes).
    public static func append(_ bytes: [UInt8], to out: inout [UInt8]) {
        bytes.withUnsafeBytes { append($0, to: &out) }
    }

    /// Written into a stack buffer, then copied in once (an append per digit costs a capacity
    /// check each: Digest hexes four hashes per answered request).
    public static func append(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count * 2) { digits in
            write(bytes, to: digits)
            out.append(contentsOf: digits)
        }
    }

    /// Writes the hex of `bytes` into `digits`, which holds twice as many.
    public static func write(_ bytes: UnsafeRawBufferPointer, to digits: UnsafeMutableBufferPointer<UInt8>) {
        precondition(digits.count >= 2 * bytes.count, "no room for the hex digits")
        for (index, byte) in bytes.enumerated() {
            digits[2 * index] = hexDigit(byte >> 4)
            digits[2 * index + 1] = hexDigit(byte & 0x0f)
        }
    }

    @inline(__always) private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// Nil unless the text is an even number of hex digits (either case).
    public static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var index = 0
        while index < chars.count {
            guard let high = digitValue(chars[index]), let low = digitValue(chars[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    /// The value of one hex digit (either case), nil for any other byte.
    public static func digitValue(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return char - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return char - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return char - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
