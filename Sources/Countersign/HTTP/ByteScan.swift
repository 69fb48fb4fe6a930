/// Word-at-a-time scans of a received head: eight bytes per step while none of them is of
/// interest, byte by byte from the first word that might hold one. Heads are scanned two or
/// three times per message (line structure, field lines, values), so this is most of parsing.
enum ByteScan {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// Whether some byte of `word` is zero. Never wrong when none is; a word it flags is
    /// looked at byte by byte, so a spurious flag costs time only.
    @inline(__always) private static func hasZeroByte(_ word: UInt64) -> Bool {
        (word &- ones) & ~word & highs != 0
    }

    /// Whether some byte of `word` is below `bound` (at most 0x80).
    @inline(__always) private static func hasByteBelow(_ word: UInt64, _ bound: UInt8) -> Bool {
        (word &- ones &* UInt64(bound)) & ~word & highs != 0
    }

    /// The eight bytes at `at`, the first of them in the low byte.
    @inline(__always) private static func word(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt64 {
        UInt64(littleEndian: bytes.baseAddress.unsafelyUnwrapped.loadUnaligned(fromByteOffset: at, as: UInt64.self))
    }

    /// The high bit of exactly each zero byte of `word` (no carry crosses a byte here, unlike
    /// `hasZeroByte`), so the first one's position is its trailing zero count.
    @inline(__always) private static func zeroByteMarks(_ word: UInt64) -> UInt64 {
        let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        return ~((((word & low7) &+ low7) | word) | low7)
    }

    /// The index of the first CR or LF in `start..<limit`, or `limit`.
    static func firstLineBreak(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) -> Int {
        var index = start
        while index + 8 <= limit {
            let word = word(bytes, index)
            let marks = zeroByteMarks(word ^ (ones &* UInt64(CR))) | zeroByteMarks(word ^ (ones &* UInt64(LF)))
            if marks != 0 { return index + marks.trailingZeroBitCount / 8 }
            index += 8
        }
        while index < limit, bytes[index] != CR, bytes[index] != LF { index += 1 }
        return index
    }

    /// The index of the first `byte` in `start..<limit`, or `limit`.
    static func firstIndex(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) -> Int {
        var index = start
        let pattern = ones &* UInt64(byte)
        while index + 8 <= limit {
            let marks = zeroByteMarks(word(bytes, index) ^ pattern)
            if marks != 0 { return index + marks.trailingZeroBitCount / 8 }
            index += 8
        }
        while index < limit, bytes[index] != byte { index += 1 }
        return index
    }

    /// The high bit of exactly each byte of `word` strictly between `low` and `high` (both at
    /// most 128; bytes from 0x80 never count). Exact per byte: no sum or difference here
    /// reaches into the next byte.
    @inline(__always) private static func marksBetween(_ word: UInt64, _ low: UInt64, _ high: UInt64) -> UInt64 {
        let low7 = word & (ones &* 0x7F)
        return ((ones &* (127 + high)) &- low7) & ~word & (low7 &+ ones &* (127 - low)) & highs
    }

    /// Letters, digits and `-`: the bytes nearly every field name is made of.
    @inline(__always) private static func isPlainNameByte(_ byte: UInt8) -> Bool {
        let folded = byte | 0x20
        return (folded >= 0x61 && folded <= 0x7A) || CharacterClass.isDigit(byte) || byte == UInt8(ascii: "-")
    }

    /// The index of the first byte in `start..<limit` that is not a letter, digit or `-`, or
    /// `limit`: a field name's usual bytes passed eight at a time (the word read past the name
    /// stops at its colon), every other byte left to the caller's exact checks.
    static func endOfPlainName(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) -> Int {
        var index = start
        while index + 8 <= limit {
            let word = word(bytes, index)
            let plain = marksBetween(word | (ones &* 0x20), 0x60, 0x7B) | marksBetween(word, 0x2F, 0x3A)
                | zeroByteMarks(word ^ (ones &* UInt64(UInt8(ascii: "-"))))
            let other = ~plain & highs
            if other != 0 { return index + other.trailingZeroBitCount / 8 }
            index += 8
        }
        while index < limit, isPlainNameByte(bytes[index]) { index += 1 }
        return index
    }

    /// Whether every byte in `range` may stand in a field value (VCHAR, SP, HTAB, obs-text).
    static func allFieldValueBytes(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        var index = range.lowerBound
        while index + 8 <= range.upperBound {
            let word = word(bytes, index)
            // Below 0x20 (HTAB included: rare, checked below) or DEL.
            if hasByteBelow(word, 0x20) || hasZeroByte(word ^ (ones &* 0x7F)) { break }
            index += 8
        }
        while index < range.upperBound {
            guard CharacterClass.isFieldValueChar(bytes[index]) else { return false }
            index += 1
        }
        return true
    }
}
