import XCTest
@testable import CountersignTrust

/// `ocsp_stapling` over what the staple said (`StapleCheck`): one row per mode and finding.
final class StapleDecisionTests: XCTestCase {
    func refusal(_ mode: TrustSettings.OCSPStapling, _ finding: StapleFinding) -> TrustRefusal? {
        StapleCheck(mode: mode).refusal(for: finding, leaf: "CN=leaf", serial: "1000")
    }

    func testOffDecidesNothing() {
        for finding in [StapleFinding.absent, .unknown, .invalid("forged"), .revoked(RevokedEntry(revocationDate: 0, reason: nil))] {
            XCTAssertNil(refusal(.off, finding))
        }
    }

    func testAGoodStapleIsAcceptedInBothModes() {
        XCTAssertNil(refusal(.prefer, .good))
        XCTAssertNil(refusal(.require, .good))
    }

    func testNoPositiveAnswerIsAcceptedOnlyUnderPrefer() {
        XCTAssertNil(refusal(.prefer, .absent))
        XCTAssertNil(refusal(.prefer, .unknown))
        XCTAssertEqual(refusal(.require, .absent), TrustRefusal(kind: .revocationUnknown,
            details: "revocation unknown for CN=leaf (serial 1000): the server stapled no OCSP response, and ocsp_stapling requires one"))
        XCTAssertEqual(refusal(.require, .unknown)?.kind, .revocationUnknown)
    }

    func testARevokedStapleIsRefusedInBothModesWithDateAndReason() {
        let revoked = StapleFinding.revoked(RevokedEntry(revocationDate: 1_798_761_600, reason: "keyCompromise"))
        let expected = TrustRefusal(kind: .revoked, details: "certificate revoked: CN=leaf (serial 1000) was revoked on"
            + " 2027-01-01T00:00:00Z, reason keyCompromise, according to the stapled OCSP response")
        XCTAssertEqual(refusal(.prefer, revoked), expected)
        XCTAssertEqual(refusal(.require, revoked), expected)
    }

    func testAStapleFailingVerificationIsRefusedInBothModes() {
        let invalid = StapleFinding.invalid("the stapled OCSP response expired: its nextUpdate was 2026-01-01T00:00:00Z")
        let expected = TrustRefusal(kind: .revocationUnknown, details: "stapled OCSP response refused for CN=leaf (serial 1000):"
            + " the stapled OCSP response expired: its nextUpdate was 2026-01-01T00:00:00Z")
        XCTAssertEqual(refusal(.prefer, invalid), expected)
        XCTAssertEqual(refusal(.require, invalid), expected)
    }

    func testAStapleThatIsNotOCSPIsInvalid() throws {
        let leaf = try PKIFixture.shared.certificate("leaf.pem")
        let issuer = try PKIFixture.shared.certificate("intermediate.pem")
        XCTAssertEqual(OCSPStaple.examine([0x30, 0x00], leaf: leaf, issuer: issuer, at: 0),
                       .invalid("the stapled OCSP response does not parse"))
    }
}
