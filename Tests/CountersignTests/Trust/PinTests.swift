import XCTest
@testable import CountersignTrust
import CountersignSupport

final class PinTests: XCTestCase {
    // SHA-256 of the empty string, a well-known value, as base64.
    let emptySHA256 = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="

    func testParsesCurlFormAndSingleSlashForm() throws {
        let curl = try PublicKeyPin(parsing: "sha256//" + emptySHA256)
        let single = try PublicKeyPin(parsing: "sha256/" + emptySHA256)
        XCTAssertEqual(curl, single)
        XCTAssertEqual(curl.sha256, SHA256.hash([]))
    }

    /// One pin in 64 has base64 beginning with `/`: its HPKP form then starts `sha256//` too.
    func testAPinWhoseBase64BeginsWithASlashParsesInBothForms() throws {
        let digest = [UInt8](repeating: 0, count: 31) + [0xFF]
        let reversed = Array(digest.reversed())
        let encoded = Base64.encode(reversed)
        XCTAssertEqual(encoded.first, "/")
        XCTAssertEqual(try PublicKeyPin(parsing: "sha256//" + encoded).sha256, reversed)
        XCTAssertEqual(try PublicKeyPin(parsing: "sha256/" + encoded).sha256, reversed)
    }

    func testRendersInCurlForm() throws {
        let pin = try PublicKeyPin(sha256: SHA256.hash([]))
        XCTAssertEqual(pin.description, "sha256//" + emptySHA256)
        XCTAssertEqual(try PublicKeyPin(parsing: pin.description), pin)
    }

    func testPrefixIsCaseInsensitiveAndSpacesAreTrimmed() throws {
        XCTAssertEqual(try PublicKeyPin(parsing: "  SHA256//\(emptySHA256) ").sha256, SHA256.hash([]))
    }

    func testRejectsMalformedPinsWithASentence() {
        let cases: [(String, String)] = [
            (emptySHA256, "must start with sha256//"),
            ("sha1//" + emptySHA256, "must start with sha256//"),
            ("sha256//not*base64=", "not valid base64"),
            ("sha256//" + String(emptySHA256.dropLast()), "not valid base64"),
            ("sha256//" + String(emptySHA256.dropLast(4)), "decodes to 30 bytes"),
            ("sha256//AAAA", "decodes to 3 bytes"),
            ("sha256//", "decodes to 0 bytes"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try PublicKeyPin(parsing: text), text) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(text): \(error)")
            }
        }
    }

    func testSPKIPinOfACertificateEqualsTheOpenSSLCommandLine() throws {
        let fixture = PKIFixture.shared
        for name in ["leaf.pem", "intermediate.pem", "client.pem"] {
            let expected = Shell.pipeline("openssl x509 -in '\(fixture.path(name))' -pubkey -noout"
                + " | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64")
            XCTAssertEqual(PublicKeyPin(of: try fixture.certificate(name)).description, "sha256//" + expected, name)
        }
    }
}
