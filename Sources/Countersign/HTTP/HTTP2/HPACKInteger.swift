/// RFC 7541 §5.1: an integer in an N-bit prefix, continued in 7-bit groups.
enum HPACKInteger {
    /// Values above this are refused: no length or index we accept comes near it, and it keeps
    /// the shift arithmetic far from overflow.
    static let maximum = Int(Int32.max)

    /// Appends `value` with `prefixBits` bits of prefix; `flags` fills the octet's high bits.
    static func encode(_ value: Int, prefixBits: Int, flags: UInt8, into out: inout [UInt8]) {
        let limit = (1 << prefixBits) - 1
        if value < limit {
            out.append(flags | UInt8(value))
            return
        }
        out.append(flags | UInt8(limit))
        var rest = value - limit
        while rest >= 128 {
            out.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        out.append(UInt8(rest))
    }

    /// Reads an integer whose prefix is the low `prefixBits` bits of `bytes[index]`.
    static func decode(_ bytes: [UInt8], at index: inout Int, prefixBits: Int) throws(HPACKError) -> Int {
        guard index < bytes.count else { throw .truncated }
        let limit = (1 << prefixBits) - 1
        var value = Int(bytes[index]) & limit
        index += 1
        guard value == limit else { return value }
        var shift = 0
        while true {
            guard index < bytes.count else { throw .truncated }
            let octet = bytes[index]
            index += 1
            // Five continuation octets carry 35 bits: anything longer (even zero padding) overflows.
            guard shift <= 28 else { throw .integerOverflow }
            value += Int(octet & 0x7F) << shift
            guard value <= maximum else { throw .integerOverflow }
            if octet & 0x80 == 0 { return value }
            shift += 7
        }
    }
}
