import XCTest
@testable import CountersignSigning

/// A sibling of the SigV4 redaction: an RFC 9421 HMAC key printed, debug-printed or dumped by
/// accident (a log line, an error) shows no byte of its secret.
final class SigningKeyRedactionTests: XCTestCase {
    func testSharedSecretKeyPrintsNoSecret() throws {
        let secret: [UInt8] = Array("0123456789abcdef-hmac-secret".utf8)
        let key = try MessageSigningKey(sharedSecret: secret)
        var dumped = ""
        dump(key, to: &dumped)
        let decimal = secret.map(String.init).joined(separator: ", ")
        for text in [String(describing: key), String(reflecting: key), dumped, String(describing: key.material), "\(key.material)"] {
            XCTAssertFalse(text.contains(decimal), text)
            XCTAssertFalse(text.contains("\(secret[0])\n"), text)
            XCTAssertTrue(text.contains("hmac-sha256") || text.contains("redacted"), text)
        }
    }
}
