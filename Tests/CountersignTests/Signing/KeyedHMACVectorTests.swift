import CountersignSigning
import CountersignSupport
import XCTest

/// RFC 4231's HMAC-SHA256 test cases against the precomputed-pad implementation: short and long
/// keys (case 6 and 7: a key longer than the block is hashed first), data shorter and longer
/// than a block, and case 5's output truncated to 128 bits compared as a prefix.
final class KeyedHMACVectorTests: XCTestCase {
    private func mac(key: [UInt8], data: [UInt8]) throws -> String {
        let hmac = try XCTUnwrap(KeyedHMACSHA256(key: key))
        return Hex.encode(hmac.authenticate(data))
    }

    func testRFC4231Cases() throws {
        XCTAssertEqual(try mac(key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8)),
                       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        XCTAssertEqual(try mac(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8)),
                       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        XCTAssertEqual(try mac(key: [UInt8](repeating: 0xaa, count: 20), data: [UInt8](repeating: 0xdd, count: 50)),
                       "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe")
        XCTAssertEqual(try mac(key: Array(1...25), data: [UInt8](repeating: 0xcd, count: 50)),
                       "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b")
        XCTAssertTrue(try mac(key: [UInt8](repeating: 0x0c, count: 20), data: Array("Test With Truncation".utf8))
            .hasPrefix("a3b6167473100ee06e0c796c2955552b"))
        XCTAssertEqual(try mac(key: [UInt8](repeating: 0xaa, count: 131),
                               data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)),
                       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        XCTAssertEqual(try mac(key: [UInt8](repeating: 0xaa, count: 131),
                               data: Array("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.".utf8)),
                       "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2")
    }

    /// One keyed instance used for many messages gives each message its own MAC (the padded
    /// states are copied, never advanced), the same as a fresh instance would.
    func testTheKeyedStateIsNotConsumedByUse() throws {
        let hmac = try XCTUnwrap(KeyedHMACSHA256(key: Array("Jefe".utf8)))
        let message = Array("what do ya want for nothing?".utf8)
        let first = hmac.authenticate(message)
        _ = hmac.authenticate(Array("something else".utf8))
        XCTAssertEqual(hmac.authenticate(message), first)
        XCTAssertEqual(try mac(key: [], data: []), "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }
}
