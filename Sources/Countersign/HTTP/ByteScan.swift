/// Word-at-a-time scans of a received head: eight bytes per step while none of them is of
/// interest. Each scan is a mark function (the high bit of exactly each byte of interest in a
/// word, with no carry between bytes) run by `firstMarked`, which takes a line's last few
/// bytes as one more word too, so no line is walked byte by byte.
enum ByteScan {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080
    private static let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F

    /// The eight bytes at `at`, the first of them in the low byte.
    @inline(__always) private static func word(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt64 {
        UInt64(littleEndian: bytes.baseAddress.unsafelyUnwrapped.loadUnaligned(fromByteOffset: at, as: UInt64.self))
    }

    /// The `count` (1...7) bytes at `at` in the low bytes of a word whose other bytes are
    /// zero: the word that ends at `at + count`, shifted down, when the buffer holds eight
    /// bytes that far; assembled byte by byte in a buffer shorter than a word.
    @inline(__always) private static func shortWord(_ bytes: UnsafeRawBufferPointer, _ at: Int, _ count: Int) -> UInt64 {
        let end = at + count
        if end >= 8 { return word(bytes, end - 8) >> UInt64(64 - 8 * count) }
        var assembled: UInt64 = 0
        for offset in 0..<count { assembled |= UInt64(bytes[at + offset]) << UInt64(8 * offset) }
        return assembled
    }

    /// The index of the first byte in `start..<limit` that `marks` marks, or `limit`. Reads
    /// only bytes inside the buffer (the last word may start before `start`; what it holds
    /// before `start` is shifted out).
    @inline(__always) private static func firstMarked(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int,
                                                      _ marks: (UInt64) -> UInt64) -> Int {
        var index = start
        while index + 8 <= limit {
            let found = marks(word(bytes, index))
            if found != 0 { return index + found.trailingZeroBitCount >> 3 }
            index += 8
        }
        let count = limit - index
        guard count > 0 else { return limit }
        // The zero bytes above the last `count` are all marked or none is (marks are exact
        // per byte), so a mark among them is first at `count`: the answer is then `limit`.
        let found = marks(shortWord(bytes, index, count))
        return found != 0 ? index + found.trailingZeroBitCount >> 3 : limit
    }

    // MARK: Marks (each exact per byte: no sum or difference reaches into the next byte)

    /// The high bit of exactly each zero byte of `word`.
    @inline(__always) static func zeroMarks(_ word: UInt64) -> UInt64 {
        ~(((word & low7) &+ low7) | word | low7)
    }

    /// The high bit of each CR and each LF.
    @inline(__always) static func lineBreakMarks(_ word: UInt64) -> UInt64 {
        zeroMarks(word ^ (ones &* UInt64(CR))) | zeroMarks(word ^ (ones &* UInt64(LF)))
    }

    /// The high bit of each control byte (below 0x20: HTAB, CR and LF among them) and DEL: the
    /// bytes a field value may not hold, but for HTAB. Bytes from 0x80 (obs-text) are never marked.
    @inline(__always) static func controlMarks(_ word: UInt64) -> UInt64 {
        let low = word & low7
        let fromSpace = low &+ ones &* 0x60  // high bit set where the low seven bits are 0x20 or more
        let delete = low &+ ones             // high bit set where they are 0x7F
        return (~fromSpace | delete) & ~word & highs
    }

    /// The high bit of each byte that is not visible (VCHAR, 0x21-0x7E): SP, controls, DEL, 0x80-0xFF.
    @inline(__always) static func invisibleMarks(_ word: UInt64) -> UInt64 {
        let low = word & low7
        let fromBang = low &+ ones &* 0x5F   // high bit set where the low seven bits are 0x21 or more
        let delete = low &+ ones
        return (word | ~fromBang | delete) & highs
    }

    /// The high bit of exactly each byte of `word` strictly between `low` and `high` (both at
    /// most 128; bytes from 0x80 never count).
    @inline(__always) private static func marksBetween(_ word: UInt64, _ low: UInt64, _ high: UInt64) -> UInt64 {
        let bits = word & low7
        return ((ones &* (127 + high)) &- bits) & ~word & (bits &+ ones &* (127 - low)) & highs
    }

    /// The high bit of each byte that is not a letter or `-`. (Digits, rare in a name, are left
    /// to the caller's byte checks: their range test cost a quarter of every name word.)
    @inline(__always) static func unplainNameMarks(_ word: UInt64) -> UInt64 {
        let plain = marksBetween(word | (ones &* 0x20), 0x60, 0x7B) | zeroMarks(word ^ (ones &* UInt64(UInt8(ascii: "-"))))
        return ~plain & highs
    }

    // MARK: Scans

    /// The index of the first CR or LF in `start..<limit`, or `limit`.
    static func firstLineBreak(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) -> Int {
        firstMarked(bytes, from: start, limit: limit, lineBreakMarks)
    }

    /// The index of the first `byte` in `start..<limit`, or `limit`.
    static func firstIndex(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) -> Int {
        let pattern = ones &* UInt64(byte)
        return firstMarked(bytes, from: start, limit: limit) { zeroMarks($0 ^ pattern) }
    }

    /// The index of the first `p` in `start..<limit` with `first` at `p` and `last` at
    /// `p + distance`, or `limit`: a needle's two ends looked for together, so that its
    /// first byte alone (a common letter) seldom stops the scan. `limit - 1 + distance`
    /// must be inside the buffer.
    static func firstPair(_ first: UInt8, _ last: UInt8, distance: Int, in bytes: UnsafeRawBufferPointer,
                          from start: Int, limit: Int) -> Int {
        let firsts = ones &* UInt64(first), lasts = ones &* UInt64(last)
        var index = start
        while index + 8 <= limit {
            let found = zeroMarks(word(bytes, index) ^ firsts) & zeroMarks(word(bytes, index + distance) ^ lasts)
            if found != 0 { return index + found.trailingZeroBitCount >> 3 }
            index += 8
        }
        let count = limit - index
        guard count > 0 else { return limit }
        // As in `firstMarked`: the zero filler of both words is marked everywhere or nowhere.
        let found = zeroMarks(shortWord(bytes, index, count) ^ firsts) & zeroMarks(shortWord(bytes, index + distance, count) ^ lasts)
        return found != 0 ? index + found.trailingZeroBitCount >> 3 : limit
    }

    /// The index of the first control byte or DEL in `start..<limit` that is not HTAB, or
    /// `limit`: where a field value ends (CR, LF) or holds a byte it may not.
    @inline(__always) static func endOfFieldValue(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) -> Int {
        var index = start
        while true {
            index = firstMarked(bytes, from: index, limit: limit, controlMarks)
            // HTAB is allowed, and rare: step over it and go on a word at a time.
            guard index < limit, bytes[index] == HTAB else { return index }
            index += 1
        }
    }

    /// The index of the first byte in `start..<limit` that is not visible (0x21-0x7E), or `limit`.
    static func endOfVisible(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) -> Int {
        firstMarked(bytes, from: start, limit: limit, invisibleMarks)
    }

    /// The index of the first byte in `start..<limit` that is not a letter or `-`, or `limit`:
    /// a field name's usual bytes passed eight at a time, every other byte left to the
    /// caller's exact checks.
    @inline(__always) static func endOfPlainName(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) -> Int {
        firstMarked(bytes, from: start, limit: limit, unplainNameMarks)
    }

    /// Whether every byte in `range` may stand in a field value (VCHAR, SP, HTAB, obs-text).
    static func allFieldValueBytes(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        endOfFieldValue(bytes, from: range.lowerBound, limit: range.upperBound) == range.upperBound
    }
}
