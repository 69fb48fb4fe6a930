import Foundation
import XCTest
import CountersignSupport
import COpenSSL

final class SupportTests: XCTestCase {
    func testBase64KnownAnswers() {
        // RFC 4648 §10 test vectors.
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=",
                       "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base64.encode(Array(plain.utf8)), encoded)
            XCTAssertEqual(Base64.decode(encoded), Array(plain.utf8))
        }
        let all = (0...255).map { UInt8($0) }
        XCTAssertEqual(Base64.decode(Base64.encode(all)), all)
        // Every length's padding, against Foundation's encoder; contiguous and not, appended after bytes.
        for length in 0...64 {
            let bytes = all.shuffled().prefix(length)
            let expected = Data(bytes).base64EncodedString()
            XCTAssertEqual(Base64.encode(Array(bytes)), expected, "length \(length)")
            XCTAssertEqual(Base64.encode(bytes.lazy.map { $0 }), expected, "length \(length), not contiguous")
            var output = Array("x=".utf8)
            Base64.append(Array(bytes), to: &output)
            XCTAssertEqual(String(decoding: output, as: UTF8.self), "x=" + expected)
        }
    }

    /// One decoder for pins, Basic credentials and NTLM/Negotiate tokens: padding only at the
    /// end, only the standard alphabet, nothing around it (Foundation accepts several of these).
    func testBase64DecodingIsStrict() {
        for text in ["Zg", "Zg=", "Zg=a", "Z===", "Zm=v", "====", "Zm9vYmFy====", "Zg==Zg==", " Zm9v", "Zm9v\n", "Zm9-", "Zm9_"] {
            XCTAssertNil(Base64.decode(text), text.debugDescription)
        }
        XCTAssertEqual(Base64.decode("Zm9v"[...]), Array("foo".utf8), "a Substring decodes like a String")
    }

    func testHexRoundTripAndRejections() {
        XCTAssertEqual(Hex.encode([0x00, 0x0f, 0xab, 0xff]), "000fabff")
        XCTAssertEqual(Hex.decode("000FabFF"), [0x00, 0x0f, 0xab, 0xff])
        XCTAssertNil(Hex.decode("abc"))
        XCTAssertNil(Hex.decode("zz"))
    }

    func testSHA256KnownAnswers() {
        // FIPS 180-2 appendix B.1 and the empty message.
        XCTAssertEqual(Hex.encode(SHA256.hash(Array("abc".utf8))),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(Hex.encode(SHA256.hash([UInt8]())),
                       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(SHA256.hash("abc".utf8), SHA256.hash(Array("abc".utf8)), "a non-contiguous sequence hashes the same")
    }

    func testOpenSSLErrorQueueDrainsAndDescribes() {
        OpenSSLErrorQueue.clear()
        // Two failing PEM reads queue the same reason twice.
        for _ in 0..<2 {
            let bio = BIO_new_mem_buf("x", 1)
            XCTAssertNil(PEM_read_bio_X509(bio, nil, nil, nil))
            BIO_free(bio)
        }
        let codes = OpenSSLErrorQueue.drainCodes()
        XCTAssertGreaterThanOrEqual(codes.count, 2)
        XCTAssertTrue(OpenSSLErrorQueue.drainCodes().isEmpty, "draining empties the queue")
        XCTAssertEqual(OpenSSLErrorQueue.reasons(of: codes), ["no start line"], "each reason once")

        // A code handed over by libevent (packed as OpenSSL 3 packs library and reason).
        let unknownCA = UInt(ERR_LIB_SSL) << 23 | UInt(SSL_R_TLSV1_ALERT_UNKNOWN_CA)
        let entry = OpenSSLErrorQueue.Entry(code: unknownCA)
        XCTAssertEqual(entry.library, ERR_LIB_SSL)
        XCTAssertEqual(entry.reason, SSL_R_TLSV1_ALERT_UNKNOWN_CA)
        XCTAssertEqual(entry.text, "tlsv1 alert unknown ca")
        XCTAssertEqual(OpenSSLErrorQueue.reasons(of: [unknownCA, codes[0], unknownCA]), ["tlsv1 alert unknown ca", "no start line"])
    }
}
