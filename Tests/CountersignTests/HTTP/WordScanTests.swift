import XCTest
@testable import CountersignHTTP

/// The parser scans heads eight bytes at a time: a forbidden byte must be found wherever it
/// falls in a word (first byte, last byte, the tail after the last whole word), and bytes
/// that look alike to a word test (obs-text, HTAB, `~`) must still pass.
final class WordScanTests: XCTestCase {
    private let longValue = String(repeating: "abcdefgh", count: 4) + "xyz"  // 35 bytes: words and a tail

    func testAControlByteAnywhereInAValueIsRefused() {
        for position in 0..<longValue.count {
            for control in ["\u{00}", "\u{01}", "\u{1F}", "\u{7F}", "\u{0B}"] {
                var value = Array(longValue)
                value[position] = Character(control)
                refuseRequest("GET / HTTP/1.1\r\nHost: a\r\nX-Long: a\(String(value))z\r\n\r\n", .badFieldValue)
            }
        }
    }

    func testABareLineBreakAnywhereInALineIsRefused() {
        for position in 0..<longValue.count {
            var value = Array(longValue)
            value[position] = "\n"
            refuseRequest("GET / HTTP/1.1\r\nHost: a\r\nX-Long: a\(String(value))z\r\n\r\n", .bareLF)
            value[position] = "\r"
            refuseRequest("GET / HTTP/1.1\r\nHost: a\r\nX-Long: a\(String(value))z\r\n\r\n", .bareCR)
        }
    }

    /// Field names are passed eight bytes at a time while they hold letters, digits and `-`:
    /// every other byte, wherever it falls in a word or the tail, gets the byte-wise verdict.
    func testEveryByteAnywhereInAFieldNameGetsItsOwnVerdict() {
        let name = Array("X-Long-Field-Name-0123456789-abc".utf8)  // 32 bytes: four words
        for position in [0, 1, 7, 8, 15, 16, 24, 30, 31] {
            for byte in UInt8(0)...UInt8(255) where byte != COLON && byte != CR && byte != LF {
                var changed = name
                changed[position] = byte
                let head = Wire.bytes("GET / HTTP/1.1\r\nHost: a\r\n") + changed + Wire.bytes(": v\r\n\r\n")
                let verdict: String
                switch Wire.request(head) {
                case .complete(let parsed, _): verdict = parsed.headers.nameBytes(1).elementsEqual(changed) ? "accepted" : "misread"
                case .invalid(let error): verdict = error.kind.rawValue
                case .incomplete: verdict = "incomplete"
                }
                let expected = switch byte {
                case _ where CharacterClass.isTokenChar(byte): "accepted"
                case SP, HTAB: position == 0 ? "obsoleteLineFolding" : "whitespaceBeforeColon"
                default: "badFieldName"
                }
                XCTAssertEqual(verdict, expected, "byte \(byte) at \(position)")
            }
        }
    }

    /// The marker search finds its first byte a word at a time: a match anywhere (first byte,
    /// across a word boundary, the tail, the very end) is found, a near miss anywhere is not.
    func testASearchFindsItsNeedleAnywhereAndNothingElse() {
        let needle = Array("countersign".utf8)
        for length in 0...40 {
            let filler = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 3) }
            for position in 0...max(0, length - needle.count) where length >= needle.count {
                var hit = filler
                hit.replaceSubrange(position..<(position + needle.count), with: needle)
                XCTAssertTrue(hit.withUnsafeBytes { ByteSearch.contains($0, needle) }, "needle at \(position) of \(length)")
                for miss in 0..<needle.count {
                    var near = hit
                    near[position + miss] = UInt8(ascii: "x")
                    XCTAssertFalse(near.withUnsafeBytes { ByteSearch.contains($0, needle) }, "near miss \(miss) at \(position) of \(length)")
                }
            }
            XCTAssertFalse(filler.withUnsafeBytes { ByteSearch.contains($0, needle) })
            XCTAssertFalse(filler.withUnsafeBytes { ByteSearch.contains($0, []) })
        }
        XCTAssertTrue(Array("ccountersign".utf8).withUnsafeBytes { ByteSearch.contains($0, needle) })
    }

    func testValueBytesThatResembleForbiddenOnesAreKept() {
        let value = "\u{80}\u{FF}\t~ !\u{E9}abc" + longValue + "\u{A0}\t\u{7E}"
        let head = acceptRequest("GET / HTTP/1.1\r\nHost: a\r\nX-Long: \(value)\r\n\r\n")
        XCTAssertEqual(head?.headers["X-Long"], value)
    }
}
