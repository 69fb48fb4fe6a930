import XCTest
@testable import CountersignTrust

/// Facts gathered from real certificates made by make-pki.sh, and the decisions on them.
final class ServedChainFactsTests: XCTestCase {
    let fixture = PKIFixture.shared

    func anchorsPolicy(_ settings: TrustSettings = TrustSettings(anchors: [])) throws -> TrustPolicy {
        var settings = settings
        settings.anchors = [fixture.path("root.pem")]
        return try TrustPolicy.load(settings)
    }

    func decide(_ chainFile: String, _ policy: TrustPolicy, name: String = "localhost") throws -> (ServedChainFacts, TrustDecision) {
        let facts = policy.gatherFacts(served: try fixture.certificates(chainFile), serverName: name)
        return (facts, policy.evaluate(facts))
    }

    func testAValidChainVerifiesAgainstItsAnchorAndMatchesNames() throws {
        let policy = try anchorsPolicy()
        for name in ["localhost", "LOCALHOST", "127.0.0.1", "::1"] {
            let (facts, decision) = try decide("leaf-chain.pem", policy, name: name)
            XCTAssertEqual(decision, .trusted, name)
            XCTAssertEqual(facts.nameMatch, .matched, name)
        }
        let (facts, _) = try decide("leaf-chain.pem", policy)
        guard case .verified(let chain)? = facts.chainResults["configured anchors"] else {
            return XCTFail("not verified: \(facts.chainResults)")
        }
        XCTAssertEqual(chain.map(\.subject).last, "CN=Countersign Test Root,O=Countersign Tests")
        XCTAssertEqual(facts.servedPins, try fixture.certificates("leaf-chain.pem").map { PublicKeyPin(of: $0) })
        XCTAssertEqual(facts.leafNotAfter, try fixture.certificate("leaf.pem").notAfter)
    }

    func testExpiredLeafNamesItsExpiryDate() throws {
        let (_, decision) = try decide("expired-chain.pem", try anchorsPolicy())
        XCTAssertEqual(decision, .refused(TrustRefusal(kind: .expired, details: "certificate expired on 2024-01-01T00:00:00Z")))
    }

    func testNotYetValidLeafNamesItsStartDate() throws {
        let (_, decision) = try decide("future-chain.pem", try anchorsPolicy())
        XCTAssertEqual(decision, .refused(TrustRefusal(kind: .notYetValid,
                                                       details: "certificate is not valid before 2090-01-01T00:00:00Z")))
    }

    func testUnknownIssuerIsNamed() throws {
        let (_, decision) = try decide("evil-leaf-chain.pem", try anchorsPolicy())
        XCTAssertEqual(decision, .refused(TrustRefusal(kind: .untrustedIssuer,
                                                       details: "untrusted issuer: CN=Evil CA (not among the configured anchors)")))
    }

    func testSelfSignedLeafIsRefusedUnlessPinnedAsACertificate() throws {
        let (_, decision) = try decide("self-signed.pem", try anchorsPolicy())
        XCTAssertEqual(decision, .refused(TrustRefusal(kind: .selfSigned,
            details: "self-signed certificate: CN=localhost,O=Countersign Tests is not among the configured anchors")))

        let pinned = try TrustPolicy.load(TrustSettings(pinning: .certificate,
                                                        pinnedCertificates: [fixture.path("self-signed.pem")]))
        XCTAssertEqual(try decide("self-signed.pem", pinned).1, .trusted)
    }

    func testWrongNameListsTheCertificatesNames() throws {
        let (_, decision) = try decide("wrong-name-chain.pem", try anchorsPolicy(), name: "api.example.com")
        XCTAssertEqual(decision, .refused(TrustRefusal(kind: .nameMismatch,
            details: "name mismatch: served certificate is for api.other.com, www.other.com; expected api.example.com")))
    }

    func testSystemRootsDoNotTrustTheTestRootButAnchorsPlusSystemRootsDo() throws {
        let system = try TrustPolicy.load(TrustSettings())
        XCTAssertEqual(try decide("leaf-chain.pem", system).1.refusal?.kind, .untrustedIssuer)
        let both = try anchorsPolicy(TrustSettings(anchorsOnly: false))
        XCTAssertEqual(try decide("leaf-chain.pem", both).1, .trusted)
    }

    func testAnIntermediateAnchorIsEnough() throws {
        let policy = try TrustPolicy.load(TrustSettings(anchors: [fixture.path("intermediate.pem")]))
        XCTAssertEqual(try decide("leaf-chain.pem", policy).1, .trusted)
    }

    func testPublicKeyPinOfTheRootMatchesThroughTheVerifiedChain() throws {
        let root = try fixture.certificate("root.pem")
        let policy = try anchorsPolicy(TrustSettings(pinning: .publicKey, pins: [root.spkiSHA256]))
        XCTAssertEqual(try decide("leaf-chain.pem", policy).1, .trusted)
        let wrong = try anchorsPolicy(TrustSettings(pinning: .publicKey, pins: [try fixture.certificate("evil-root.pem").spkiSHA256]))
        XCTAssertEqual(try decide("leaf-chain.pem", wrong).1.refusal?.kind, .pinMismatch)
    }

    func testTheSignedPathStopsAtTheFirstCertificateThatDidNotSignItsPredecessor() throws {
        let policy = try TrustPolicy.load(TrustSettings(validateDomain: false, allowInvalidCertificates: true))
        let rows: [(String, [String], [String])] = [
            ("a real chain", ["leaf.pem", "intermediate.pem", "root.pem"], ["leaf.pem", "intermediate.pem", "root.pem"]),
            ("the genuine leaf appended to a self-signed one", ["self-signed.pem", "leaf.pem"], ["self-signed.pem"]),
            ("a genuine intermediate appended to another CA's leaf", ["evil-leaf.pem", "intermediate.pem"], ["evil-leaf.pem"]),
            ("the root before the intermediate", ["leaf.pem", "root.pem", "intermediate.pem"], ["leaf.pem"]),
            ("a genuine chain after a foreign certificate", ["leaf.pem", "evil-root.pem", "intermediate.pem", "root.pem"], ["leaf.pem"]),
        ]
        for (row, served, expected) in rows {
            let facts = policy.gatherFacts(served: try served.map { try fixture.certificate($0) }, serverName: "localhost")
            XCTAssertEqual(facts.signedPath.map(\.subject), try expected.map { try fixture.certificate($0).subject }, row)
            XCTAssertEqual(facts.verifiedPath(storeLabel: nil), facts.signedPath, row)
        }
    }

    func testVerificationTimeCanBeFixed() throws {
        let policy = try anchorsPolicy()
        let leaf = try fixture.certificate("leaf.pem")
        let facts = policy.gatherFacts(served: try fixture.certificates("leaf-chain.pem"), serverName: "localhost",
                                       at: leaf.notAfter + 86_400)
        XCTAssertEqual(policy.evaluate(facts), .refused(TrustRefusal(kind: .expired,
            details: "certificate expired on \(UTCTimestamp.string(leaf.notAfter))")))
    }

    func testChannelBindingHashesTheLeafWithItsSignatureDigest() throws {
        let leaf = try fixture.certificate("leaf.pem")
        XCTAssertEqual(leaf.signatureDigestName, "SHA256")
        XCTAssertEqual(ChannelBinding.tlsServerEndPoint(leaf), leaf.sha256)
    }

    func testConfigCheckCollectsEveryProblem() {
        let check = TrustConfigCheck(
            trust: TrustSettings(anchors: [fixture.path("missing.pem")]),
            pins: ["sha256//AAAA"],
            identity: .pem(certificatePath: fixture.path("client.pem"), keyPath: fixture.path("other.key"), passphrase: nil))
        XCTAssertFalse(check.isValid)
        XCTAssertEqual(check.errors.count, 3, "\(check.errors)")
        XCTAssertTrue(check.errors[0].hasPrefix("trust.pins: pin \"sha256//AAAA\" decodes to 3 bytes"), check.errors[0])
        XCTAssertTrue(check.errors[1].hasPrefix("trust: cannot read certificate file \(fixture.path("missing.pem"))"), check.errors[1])
        XCTAssertTrue(check.errors[2].contains("does not match the certificate"), check.errors[2])

        let good = TrustConfigCheck(trust: TrustSettings(anchors: [fixture.path("root.pem")]),
                                    identity: .pkcs12(path: fixture.path("client.p12"), passphrase: "p12-pass"))
        XCTAssertEqual(good.errors, [])
        XCTAssertNotNil(good.policy)
        XCTAssertEqual(good.identity?.certificate.subject, "CN=client,O=Countersign Tests")
    }
}
