import CountersignHTTP
import XCTest

/// The byte classes the head parser checks every received byte against, over all 256 bytes.
final class CharacterClassTests: XCTestCase {
    func testTokenCharactersAreExactlyRFC9110Tchar() {
        // tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
        let tchar = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        for value in 0...255 {
            let byte = UInt8(value)
            XCTAssertEqual(CharacterClass.isTokenChar(byte), tchar.contains(byte), "byte 0x\(String(value, radix: 16))")
        }
    }

    func testNamesCompareIgnoringASCIICaseOnly() {
        XCTAssertTrue(ASCIICase.equal(Array("content-LENGTH".utf8)[...], "Content-Length".utf8))
        XCTAssertFalse(ASCIICase.equal(Array("Content-Lengti".utf8)[...], "Content-Length".utf8))
        XCTAssertFalse(ASCIICase.equal(Array("Host".utf8)[...], "Hos".utf8))
        // Only A-Z fold: `@` (0x40) and `` ` `` (0x60) differ by the same bit and must not match.
        XCTAssertFalse(ASCIICase.equal(Array("@".utf8)[...], "`".utf8))
        // A name longer than a small string, and a sequence that is not contiguous.
        XCTAssertTrue(ASCIICase.equal(Array("proxy-authentication-info".utf8)[...], "Proxy-Authentication-Info".utf8))
        XCTAssertTrue(ASCIICase.equal("x-Trace".utf8.lazy.map { $0 }, "X-TRACE".utf8))
    }
}
