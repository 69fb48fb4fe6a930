/// A nonce count as it is sent and hashed: exactly 8 lower-case hex digits (RFC 7616 §3.4),
/// held inline, so an answer writes it into KD's input and the header value without a string.
struct DigestNonceCount {
    let count: UInt32
    private let digits: UInt64

    /// The digits made eight at a time: each nibble spread into a byte of its own (the first
    /// digit in the first byte in memory), then "0" added, and the 39 more from "9" to "a" where
    /// the nibble is 10 or more.
    init(_ count: UInt32) {
        self.count = count
        var nibbles = UInt64(count)
        nibbles = (nibbles | nibbles << 16) & 0x0000_FFFF_0000_FFFF
        nibbles = (nibbles | nibbles << 8) & 0x00FF_00FF_00FF_00FF
        nibbles = (nibbles | nibbles << 4) & 0x0F0F_0F0F_0F0F_0F0F
        let letters = ((nibbles &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        digits = (nibbles &+ 0x3030_3030_3030_3030 &+ letters &* 39).bigEndian
    }

    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        withUnsafeBytes(of: digits, body)
    }

    var text: String { withBytes { String(decoding: $0, as: UTF8.self) } }
}
