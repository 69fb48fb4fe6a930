import XCTest
@testable import CountersignAuth
import CountersignSupport

/// Known answers pinning each OpenSSL primitive the schemes are built on.
final class CryptoVectorTests: XCTestCase {
    func testSHA512_256IsTheFIPSFunctionNotTruncatedSHA512() {
        // FIPS 180-4 / NIST example for SHA-512/256("abc").
        XCTAssertEqual(Hex.encode(MessageDigest.hash(.sha512_256, "abc")),
                       "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23")
    }

    func testMD4FromTheLegacyProvider() {
        // RFC 1320 appendix A.5.
        XCTAssertEqual(Hex.encode(MessageDigest.hash(.md4, "abc")), "a448017aaf21d8525fc10ae87aa6729d")
    }

    func testMD5AndSHA256() {
        XCTAssertEqual(Hex.encode(MessageDigest.hash(.md5, "abc")), "900150983cd24fb0d6963f7d28e17f72")
        XCTAssertEqual(Hex.encode(MessageDigest.hash(.sha256, "abc")),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    func testStreamingDigestEqualsOneShot() {
        let digest = MessageDigest(.sha256)
        digest.update("a")
        digest.update("bc")
        XCTAssertEqual(digest.finish(), MessageDigest.hash(.sha256, "abc"))
    }

    func testHMACMD5() {
        // RFC 2104 test case 1.
        let mac = HMACMD5.authenticate(key: [UInt8](repeating: 0x0b, count: 16), message: Array("Hi There".utf8))
        XCTAssertEqual(Hex.encode(mac), "9294727a3638bb1c13f48ef8158bfc9d")
    }

    func testRC4FromTheLegacyProvider() throws {
        // MS-NLMP §4.2.4.2.3: RC4(SessionBaseKey, RandomSessionKey).
        let key = Hex.decode("8de40ccadbc14a82f15cb0ad0de95ca3")!
        let encrypted = try RC4.transform(key: key, [UInt8](repeating: 0x55, count: 16))
        XCTAssertEqual(Hex.encode(encrypted), "c5dad2544fc9799094ce1ce90bc9d03e")
    }

    func testRandomBytesDiffer() {
        XCTAssertNotEqual(SecureRandom.bytes(16), SecureRandom.bytes(16))
        XCTAssertEqual(SecureRandom.bytes(8).count, 8)
    }

    /// Small requests come from a pool refilled 4 KiB at a time: across several refills no
    /// 16-byte draw repeats, none is all zeros (a wiped pool handed out again), and requests
    /// larger than the pool serves, or of every size up to it, come back at their length.
    func testPooledRandomBytesNeverRepeatAcrossRefills() {
        var seen = Set<[UInt8]>()
        for _ in 0..<2_000 {
            let draw = SecureRandom.bytes(16)
            XCTAssertNotEqual(draw, [UInt8](repeating: 0, count: 16))
            XCTAssertTrue(seen.insert(draw).inserted)
        }
        for count in [0, 1, 255, 256, 257, 4096, 10_000] {
            XCTAssertEqual(SecureRandom.bytes(count).count, count)
        }
        // Bytes spread over every value: a pool that handed out wiped memory would show zeros.
        let many = (0..<64).flatMap { _ in SecureRandom.bytes(200) }
        XCTAssertLessThan(many.filter { $0 == 0 }.count, many.count / 64)
    }

    func testHexRoundTripAndRejects() {
        XCTAssertEqual(Hex.decode("00ff10Ab"), [0x00, 0xff, 0x10, 0xab])
        XCTAssertNil(Hex.decode("abc"))
        XCTAssertNil(Hex.decode("zz"))
    }
}
