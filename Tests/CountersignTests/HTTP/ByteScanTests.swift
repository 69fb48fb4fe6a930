import XCTest
@testable import CountersignHTTP

/// Each word scan against its definition a byte at a time. A scan reads eight bytes at once,
/// and its last word may start before the range (what lies there is shifted out): so the
/// range is put at every offset into a buffer, with bytes of interest just before and just
/// after it that must not count, and lines of every length 0-17 so each word boundary is hit.
final class ByteScanTests: XCTestCase {
    private typealias Scan = (UnsafeRawBufferPointer, Int, Int) -> Int

    /// Each scan, and the bytes it stops at, by definition.
    private static let scans: [(name: String, scan: Scan, stopsAt: (UInt8) -> Bool)] = [
        ("firstLineBreak", { ByteScan.firstLineBreak($0, from: $1, limit: $2) }, { $0 == CR || $0 == LF }),
        ("firstIndex(of: :)", { ByteScan.firstIndex(of: COLON, in: $0, from: $1, limit: $2) }, { $0 == COLON }),
        ("endOfFieldValue", { ByteScan.endOfFieldValue($0, from: $1, limit: $2) },
         { $0 != HTAB && !CharacterClass.isFieldValueChar($0) }),
        ("endOfVisible", { ByteScan.endOfVisible($0, from: $1, limit: $2) }, { !CharacterClass.isVisible($0) }),
        ("endOfPlainName", { ByteScan.endOfPlainName($0, from: $1, limit: $2) }, { !CharacterClass.isAlpha($0) && $0 != UInt8(ascii: "-") }),
        ("allFieldValueBytes", { ByteScan.allFieldValueBytes($0, $1..<$2) ? $2 : -1 }, { !CharacterClass.isFieldValueChar($0) }),
    ]

    private static let specials: [UInt8] = [CR, LF, 0x00, HTAB, 0x0B, 0x1F, SP, 0x21, 0x2C, 0x2D, 0x2F, 0x30, 0x39, COLON, 0x40,
                                            0x41, 0x5A, 0x5B, 0x60, 0x61, 0x7A, 0x7B, 0x7E, 0x7F, 0x80, 0x8A, 0x8D, 0xA0, 0xFF]

    /// What a scan must return: the first byte it stops at, or the limit (for
    /// `allFieldValueBytes`, -1 when it stops anywhere).
    private func expected(_ name: String, _ stopsAt: (UInt8) -> Bool, _ bytes: [UInt8], _ range: Range<Int>) -> Int {
        let first = range.first(where: { stopsAt(bytes[$0]) })
        if name == "allFieldValueBytes" { return first == nil ? range.upperBound : -1 }
        return first ?? range.upperBound
    }

    private func check(_ bytes: [UInt8], _ range: Range<Int>, _ context: @autoclosure () -> String) {
        bytes.withUnsafeBytes { raw in
            for (name, scan, stopsAt) in Self.scans {
                let found = scan(raw, range.lowerBound, range.upperBound)
                let wanted = expected(name, stopsAt, bytes, range)
                if found != wanted { XCTFail("\(name) gave \(found), not \(wanted): \(context())") }
            }
        }
    }

    /// One special byte (or none) at each offset of a line 0-17 bytes long, at each offset
    /// 0-9 into the buffer, between bytes of interest to every scan.
    func testEverySpecialByteAtEveryOffsetOfEveryLength() {
        for fill: UInt8 in [CR, LF, COLON, 0xFF] {
            for prefix in 0...9 {
                for after in [0, 9] {
                    for length in 0...17 {
                        for position in -1..<length {
                            for special in Self.specials where position >= 0 || special == CR {
                                var line = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                                if position >= 0 { line[position] = special }
                                let bytes = [UInt8](repeating: fill, count: prefix) + line + [UInt8](repeating: fill, count: after)
                                check(bytes, prefix..<(prefix + length),
                                      "byte \(special) at \(position) of \(length), \(prefix) bytes \(fill) before, \(after) after")
                            }
                        }
                    }
                }
            }
        }
    }

    /// Every byte value at each offset of a 17-byte line (two words and one more byte).
    func testEveryByteValueAtEveryOffset() {
        for prefix in [0, 3, 8] {
            for position in 0..<17 {
                for value in 0...255 {
                    var bytes = [UInt8](repeating: UInt8(ascii: "Z"), count: prefix + 17)
                    bytes[prefix + position] = UInt8(value)
                    check(bytes, prefix..<(prefix + 17), "byte \(value) at \(position), \(prefix) before")
                }
            }
        }
    }

    /// Two bytes of interest in one line: the first one is found, whatever the second (a
    /// borrow or carry from one byte's test must never mark its neighbour).
    func testTheFirstOfTwoIsFound() {
        for first in Self.specials {
            for second in 0...255 {
                for (at, next) in [(0, 1), (6, 7), (7, 8), (3, 12), (9, 10)] {
                    var bytes = [UInt8](repeating: UInt8(ascii: "k"), count: 14)
                    bytes[at] = first
                    bytes[next] = UInt8(second)
                    check(bytes, 0..<14, "\(first) at \(at), \(second) at \(next)")
                    // The same two read back to front: the second one only, then the first.
                    bytes[at] = UInt8(second)
                    bytes[next] = first
                    check(bytes, 0..<14, "\(second) at \(at), \(first) at \(next)")
                }
            }
        }
    }

    /// A needle's two ends looked for together: the first place with one byte there and the
    /// other `distance` further on, from every start, over buffers of few distinct bytes (so
    /// that near misses abound), zero bytes among them (the filler of a short last word).
    func testPairsAreFoundWhereBothEndsAre() {
        var generator = SeededGenerator(state: 0x9A1E)
        let alphabet: [UInt8] = [UInt8(ascii: "c"), UInt8(ascii: "n"), 0x00, UInt8(ascii: "x")]
        for distance in 0...11 {
            for length in (distance + 1)...(distance + 20) {
                for _ in 0..<20 {
                    let bytes = (0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }
                    let limit = length - distance
                    for (first, last) in [(alphabet[0], alphabet[1]), (0x00, alphabet[0]), (alphabet[1], 0x00), (0x00, 0x00)] {
                        for start in 0...limit {
                            let expected = (start..<limit).first { bytes[$0] == first && bytes[$0 + distance] == last } ?? limit
                            let found = bytes.withUnsafeBytes { ByteScan.firstPair(first, last, distance: distance, in: $0, from: start, limit: limit) }
                            if found != expected { XCTFail("\(bytes) from \(start): \(found), not \(expected) for \(first)...\(last) at \(distance)") }
                        }
                    }
                }
            }
        }
    }

    /// A buffer shorter than a word: its last bytes cannot be read as the word ending there.
    func testBuffersShorterThanAWord() {
        for length in 0...8 {
            for start in 0...length {
                for special in Self.specials {
                    for position in start..<max(start, length) {
                        var bytes = [UInt8](repeating: UInt8(ascii: "q"), count: length)
                        bytes[position] = special
                        check(bytes, start..<length, "byte \(special) at \(position) of a \(length)-byte buffer from \(start)")
                    }
                }
            }
        }
    }
}
