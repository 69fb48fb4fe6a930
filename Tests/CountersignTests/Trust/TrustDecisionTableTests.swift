import XCTest
@testable import CountersignTrust

/// The trust decision over facts, one row per AFNetworking AFSecurityPolicyTests behaviour,
/// adapted to SPEC "Trust evaluation" (no CN fallback; allow-invalid skips the name check).
/// The facts are written by hand here: no network and no chain building.
final class TrustDecisionTableTests: XCTestCase {
    let fixture = PKIFixture.shared
    var leaf: Certificate!
    var intermediate: Certificate!
    var root: Certificate!
    var selfSigned: Certificate!
    var evilLeaf: Certificate!

    override func setUpWithError() throws {
        leaf = try fixture.certificate("leaf.pem")
        intermediate = try fixture.certificate("intermediate.pem")
        root = try fixture.certificate("root.pem")
        selfSigned = try fixture.certificate("self-signed.pem")
        evilLeaf = try fixture.certificate("evil-leaf.pem")
    }

    // MARK: facts

    var goodChain: [CertificateSummary] { [leaf, intermediate].map(CertificateSummary.init) }

    func facts(_ policy: TrustPolicy, served: [Certificate], chain: ChainResult?, name: NameMatch = .matched,
               serverName: String = "localhost") -> ServedChainFacts {
        var results: [String: ChainResult] = [:]
        if let store = policy.chainStore, let chain { results[store.label] = chain }
        return ServedChainFacts(serverName: serverName, served: served.map(CertificateSummary.init),
                                chainResults: results, nameMatch: name)
    }

    var verifiedToRoot: ChainResult { .verified(chain: [leaf, intermediate, root].map(CertificateSummary.init)) }

    func policy(_ settings: TrustSettings, anchors: [Certificate]? = nil, pinned: [Certificate] = []) throws -> TrustPolicy {
        try TrustPolicy(settings: settings, material: TrustMaterial(anchors: anchors ?? [root], pinnedCertificates: pinned))
    }

    func publicKeyPinning(_ pinned: [Certificate], allowInvalid: Bool = false, validateDomain: Bool = true) -> TrustSettings {
        TrustSettings(pinning: .publicKey, pins: pinned.map(\.spkiSHA256), validateDomain: validateDomain,
                      allowInvalidCertificates: allowInvalid)
    }

    // MARK: default policy (pinning none)

    func testDefaultPolicyAllowsAValidChainForItsName() throws {
        let policy = try self.policy(TrustSettings())
        XCTAssertEqual(policy.evaluate(facts(policy, served: [leaf, intermediate], chain: verifiedToRoot)), .trusted)
    }

    func testDefaultPolicyRefusesAnInvalidDomainName() throws {
        let policy = try self.policy(TrustSettings())
        let decision = policy.evaluate(facts(policy, served: [leaf, intermediate], chain: verifiedToRoot,
                                             name: .mismatch(presented: ["api.other.com", "www.other.com"]),
                                             serverName: "api.example.com"))
        XCTAssertEqual(decision, .refused(TrustRefusal(kind: .nameMismatch,
            details: "name mismatch: served certificate is for api.other.com, www.other.com; expected api.example.com")))
    }

    func testWithoutDomainValidationAnInvalidDomainNameIsAllowed() throws {
        let policy = try self.policy(TrustSettings(validateDomain: false))
        XCTAssertEqual(policy.evaluate(facts(policy, served: [leaf, intermediate], chain: verifiedToRoot,
                                             name: .mismatch(presented: ["localhost"]), serverName: "invalid.org")),
                       .trusted)
    }

    func testDefaultPolicyRefusesASelfSignedCertificate() throws {
        let policy = try self.policy(TrustSettings())
        let failure = ChainFailure(kind: .selfSigned,
                                   details: "self-signed certificate: CN=localhost is not among the configured anchors")
        XCTAssertEqual(policy.evaluate(facts(policy, served: [selfSigned], chain: .failed(failure))),
                       .refused(TrustRefusal(kind: .selfSigned, details: failure.details)))
    }

    func testChainFailuresPassTheirReasonThrough() throws {
        let policy = try self.policy(TrustSettings())
        let cases = [
            ChainFailure(kind: .expired, details: "certificate expired on 2024-01-01T00:00:00Z"),
            ChainFailure(kind: .untrustedIssuer, details: "untrusted issuer: CN=Evil CA (not among the configured anchors)"),
        ]
        for failure in cases {
            XCTAssertEqual(policy.evaluate(facts(policy, served: [leaf], chain: .failed(failure))),
                           .refused(TrustRefusal(kind: failure.kind, details: failure.details)))
        }
    }

    func testAChainNeverVerifiedIsRefused() throws {
        let policy = try self.policy(TrustSettings())
        XCTAssertEqual(policy.evaluate(facts(policy, served: [leaf], chain: nil)).refusal?.kind, .invalidChain)
    }

    // MARK: public-key pinning

    func testPublicKeyPinningAllowsAnyPinnedKeyOfTheChain() throws {
        let rows: [(String, [Certificate])] = [
            ("leaf", [leaf]), ("intermediate", [intermediate]), ("root, not served but anchoring the chain", [root]),
            ("entire chain", [leaf, intermediate, root]), ("leaf plus an unrelated pin", [leaf, selfSigned]),
        ]
        for (row, pinned) in rows {
            let policy = try self.policy(publicKeyPinning(pinned))
            XCTAssertEqual(policy.evaluate(facts(policy, served: [leaf, intermediate], chain: verifiedToRoot)), .trusted, row)
        }
    }

    func testPublicKeyPinningStillValidatesTheName() throws {
        let policy = try self.policy(publicKeyPinning([leaf]))
        let decision = policy.evaluate(facts(policy, served: [leaf, intermediate], chain: verifiedToRoot,
                                             name: .mismatch(presented: ["localhost"]), serverName: "invaliddomainname.com"))
        XCTAssertEqual(decision.refusal?.kind, .nameMismatch)
    }

    func testPublicKeyPinningRefusesAnotherServersChainListingTheServedPins() throws {
        let policy = try self.policy(publicKeyPinning([leaf, selfSigned]), anchors: [root, try fixture.certificate("evil-root.pem")])
        let evilRoot = try fixture.certificate("evil-root.pem")
        let decision = policy.evaluate(facts(policy, served: [evilLeaf],
                                             chain: .verified(chain: [evilLeaf, evilRoot].map(CertificateSummary.init))))
        let served = [evilLeaf, evilRoot].map { PublicKeyPin(of: $0).description }.joined(separator: ", ")
        let configured = [leaf, selfSigned].map { PublicKeyPin(of: $0).description }.joined(separator: ", ")
        XCTAssertEqual(decision, .refused(TrustRefusal(kind: .pinMismatch,
            details: "pin mismatch: served pins \(served); configured \(configured)")))
    }

    func testPinnedCertificatesKeysArePinsInPublicKeyMode() throws {
        let policy = try self.policy(TrustSettings(pinning: .publicKey), pinned: [intermediate])
        XCTAssertEqual(policy.evaluate(facts(policy, served: [leaf, intermediate], chain: verifiedToRoot)), .trusted)
    }

    // MARK: certificate pinning

    func testCertificatePinningAllowsAnyPinnedCertificateOfTheChain() throws {
        let rows: [(String, [Certificate])] = [
            ("leaf", [leaf]), ("intermediate", [intermediate]), ("root", [root]),
            ("entire chain", [leaf, intermediate, root]), ("leaf plus an unrelated certificate", [leaf, selfSigned]),
        ]
        for (row, pinned) in rows {
            let policy = try self.policy(TrustSettings(pinning: .certificate), anchors: [], pinned: pinned)
            XCTAssertEqual(policy.chainStore?.label, "pinned certificates", row)
            XCTAssertEqual(policy.evaluate(facts(policy, served: [leaf, intermediate], chain: verifiedToRoot)), .trusted, row)
        }
    }

    func testCertificatePinningRefusesAnUnpinnedChain() throws {
        let policy = try self.policy(TrustSettings(pinning: .certificate), anchors: [], pinned: [leaf, selfSigned])
        let decision = policy.evaluate(facts(policy, served: [evilLeaf], chain: .verified(chain: [CertificateSummary(evilLeaf)])))
        XCTAssertEqual(decision, .refused(TrustRefusal(kind: .pinMismatch,
            details: "pin mismatch: no served certificate equals a pinned one (served: \(evilLeaf.subject);"
                + " pinned: \(leaf.subject); \(selfSigned.subject))")))
    }

    func testCertificatePinningStillValidatesTheName() throws {
        let policy = try self.policy(TrustSettings(pinning: .certificate), anchors: [], pinned: [leaf])
        let decision = policy.evaluate(facts(policy, served: [leaf, intermediate], chain: verifiedToRoot,
                                             name: .mismatch(presented: ["localhost"]), serverName: "invaliddomainname.com"))
        XCTAssertEqual(decision.refusal?.kind, .nameMismatch)
    }

    // MARK: allow invalid certificates (self-signed upstreams)

    func testAllowInvalidWithoutPinsAndWithoutDomainValidationAllowsSelfSigned() throws {
        let policy = try self.policy(TrustSettings(validateDomain: false, allowInvalidCertificates: true))
        XCTAssertNil(policy.chainStore)
        XCTAssertEqual(policy.evaluate(facts(policy, served: [selfSigned], chain: nil,
                                             name: .mismatch(presented: []), serverName: "foobar.com")), .trusted)
    }

    func testAllowInvalidWithAPinOfTheSelfSignedKeyAllowsIt() throws {
        let policy = try self.policy(publicKeyPinning([selfSigned], allowInvalid: true))
        // allow_invalid skips the name check too (SPEC), so a pinned key under another name passes.
        XCTAssertEqual(policy.evaluate(facts(policy, served: [selfSigned], chain: nil,
                                             name: .mismatch(presented: ["localhost"]), serverName: "foobar.com")), .trusted)
    }

    func testAllowInvalidNeverSkipsThePins() throws {
        let policy = try self.policy(publicKeyPinning([leaf], allowInvalid: true))
        XCTAssertEqual(policy.evaluate(facts(policy, served: [selfSigned], chain: nil)).refusal?.kind, .pinMismatch)
        let certificatePolicy = try self.policy(TrustSettings(pinning: .certificate, allowInvalidCertificates: true),
                                                anchors: [], pinned: [leaf])
        XCTAssertEqual(certificatePolicy.evaluate(facts(certificatePolicy, served: [selfSigned], chain: nil)).refusal?.kind,
                       .pinMismatch)
    }

    // MARK: contradictory settings are configuration errors

    func testContradictorySettingsAreRefusedWhenCompiled() {
        let rows: [(TrustSettings, [Certificate], String)] = [
            (TrustSettings(pinning: .publicKey), [],
             "trust.pinning is \"public-key\" but no trust.pins or trust.pinned_certificates are set"),
            (TrustSettings(pinning: .certificate), [], "trust.pinning is \"certificate\" but trust.pinned_certificates is empty"),
            (TrustSettings(pinning: .none, pins: [[UInt8](repeating: 1, count: 32)]), [],
             "trust.pins or trust.pinned_certificates are set but trust.pinning is \"none\""),
            (TrustSettings(validateDomain: true, allowInvalidCertificates: true), [],
             "trust.validate_domain with trust.allow_invalid_certificates and no pins proves nothing"),
            (TrustSettings(pinning: .publicKey, pins: [[1, 2, 3]]), [], "a SHA-256 pin is 32 bytes, got 3"),
        ]
        for (settings, pinned, expected) in rows {
            XCTAssertThrowsError(try TrustPolicy(settings: settings, material: TrustMaterial(pinnedCertificates: pinned))) {
                XCTAssertTrue("\($0)".hasPrefix(expected), "\($0)")
            }
        }
    }

    func testStoreLabelsFollowTheAnchorSettings() throws {
        XCTAssertEqual(try policy(TrustSettings(), anchors: []).chainStore?.label, "system roots")
        XCTAssertEqual(try policy(TrustSettings(anchorsOnly: true)).chainStore?.label, "configured anchors")
        XCTAssertEqual(try policy(TrustSettings(anchorsOnly: false)).chainStore?.label,
                       "configured anchors and system roots")
    }
}
