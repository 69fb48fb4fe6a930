import XCTest
@testable import CountersignTrust

/// The revocation decision over facts (`RevocationCheck`): written by hand, one row per
/// outcome a CRL lookup can have, so the sentences a person reads in Proxy-Status are pinned.
final class RevocationDecisionTests: XCTestCase {
    func facts(_ findings: [RevocationFinding]) -> ServedChainFacts {
        ServedChainFacts(serverName: "localhost", served: [], chainResults: [:], nameMatch: .matched, revocation: findings)
    }

    let crl = "the CRL of CN=Issuing CA (issuing.crl)"

    func testNoFindingMeansNoCRLCoversThePath() {
        XCTAssertNil(RevocationCheck().refusal(for: facts([])))
        XCTAssertEqual(RevocationCheck().acceptance(for: facts([])), "no configured CRL is issued by a CA of the verified path")
    }

    func testCertificatesNotOnTheirIssuersCRLPass() {
        let finding = RevocationFinding(subject: "CN=leaf", serial: "1000", status: .notRevoked(crl: crl))
        XCTAssertNil(RevocationCheck().refusal(for: facts([finding])))
        XCTAssertEqual(RevocationCheck().acceptance(for: facts([finding])), "CN=leaf (serial 1000) not on \(crl)")
    }

    func testARevokedCertificateIsRefusedNamingSerialDateAndReason() {
        let good = RevocationFinding(subject: "CN=leaf", serial: "1000", status: .notRevoked(crl: crl))
        let revoked = RevocationFinding(subject: "CN=Issuing CA", serial: "2A",
                                        status: .revoked(RevokedEntry(revocationDate: 1_798_761_600, reason: "cACompromise"),
                                                         crl: "the CRL of CN=Root (root.crl)"))
        XCTAssertEqual(RevocationCheck().refusal(for: facts([good, revoked])), TrustRefusal(kind: .revoked,
            details: "certificate revoked: CN=Issuing CA (serial 2A) was revoked on 2027-01-01T00:00:00Z, reason cACompromise,"
                + " according to the CRL of CN=Root (root.crl)"))
    }

    func testARevocationWithoutReasonSaysNone() {
        let revoked = RevocationFinding(subject: "CN=leaf", serial: "1000",
                                        status: .revoked(RevokedEntry(revocationDate: 0, reason: nil), crl: crl))
        XCTAssertEqual(RevocationCheck().refusal(for: facts([revoked]))?.details,
                       "certificate revoked: CN=leaf (serial 1000) was revoked on 1970-01-01T00:00:00Z, according to \(crl)")
    }

    func testAnUnusableCRLFailsClosed() {
        let stale = RevocationFinding(subject: "CN=leaf", serial: "1000",
                                      status: .unusable("\(crl) expired: its nextUpdate was 2026-01-01T00:00:00Z; install a fresh CRL"))
        XCTAssertEqual(RevocationCheck().refusal(for: facts([stale])), TrustRefusal(kind: .revocationUnknown,
            details: "revocation unknown for CN=leaf (serial 1000): \(crl) expired: its nextUpdate was 2026-01-01T00:00:00Z; install a fresh CRL"))
    }

    func testTheFirstProblemFromTheLeafUpDecides() {
        let unusable = RevocationFinding(subject: "CN=leaf", serial: "1000", status: .unusable("no"))
        let revoked = RevocationFinding(subject: "CN=Issuing CA", serial: "2A",
                                        status: .revoked(RevokedEntry(revocationDate: 0, reason: nil), crl: crl))
        XCTAssertEqual(RevocationCheck().refusal(for: facts([unusable, revoked]))?.kind, .revocationUnknown)
    }

    func testThePolicyChecksRevocationOnlyWithCRLs() throws {
        let root = try PKIFixture.shared.certificate("root.pem")
        let policy = try TrustPolicy(settings: TrustSettings(), material: TrustMaterial(anchors: [root]))
        XCTAssertFalse(policy.checks.contains { $0 is RevocationCheck })
    }

    func testRevocationWithAllowInvalidCertificatesIsRefused() {
        let settings = TrustSettings(pinning: .publicKey, pins: [[UInt8](repeating: 1, count: 32)], allowInvalidCertificates: true,
                                     crlFiles: ["/etc/ca.crl"])
        XCTAssertThrowsError(try TrustPolicy(settings: settings, material: TrustMaterial()))
    }

    func testIssuerKeyUsageRequiresCRLSignOnlyWhereKeyUsageIsPresent() throws {
        // The fixture's CAs carry keyCertSign and cRLSign; its leaf has digitalSignature only;
        // its self-signed certificate has no extensions at all (RFC 5280 6.3.3 (f): no keyUsage,
        // no restriction — limbo's crl::issuer-no-keyusage-extension).
        XCTAssertFalse(IssuerKeyUsage.lacksCRLSign(try PKIFixture.shared.certificate("root.pem")))
        XCTAssertTrue(IssuerKeyUsage.lacksCRLSign(try PKIFixture.shared.certificate("leaf.pem")))
        XCTAssertFalse(IssuerKeyUsage.lacksCRLSign(try PKIFixture.shared.certificate("self-signed.pem")))
    }

    func testPEMBlocksAreCountedByTheirBeginLine() {
        let text = "junk\n-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n-----BEGIN X509 CRL-----\nbroken"
        XCTAssertEqual(PEMBlocks.count(of: "X509 CRL", in: Array(text.utf8)), 2)
        XCTAssertEqual(PEMBlocks.count(of: "X509 CRL", in: Array("-----BEGIN X509".utf8)), 0)
    }

    func testAFileThatIsNoCRLIsAnErrorNamingIt() {
        XCTAssertThrowsError(try CertificateRevocationList.parse(Array("not a crl".utf8), source: "/etc/x.crl")) { error in
            XCTAssertEqual("\(error)", "/etc/x.crl contains no PEM CRL (expected -----BEGIN X509 CRL-----) and is not a DER CRL")
        }
        XCTAssertThrowsError(try CertificateRevocationList.parse([0x30, 0x03, 0x02, 0x01, 0x01], source: "/etc/y.crl")) { error in
            XCTAssertEqual("\(error)", "/etc/y.crl is neither a PEM nor a DER CRL")
        }
    }
}
