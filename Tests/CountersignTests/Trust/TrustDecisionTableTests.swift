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

    /// `signedPath` defaults to the leaf alone: the leaf always starts the signed path.
    func facts(_ policy: TrustPolicy, served: [Certificate], chain: ChainResult?, name: NameMatch = .matched,
               serverName: String = "localhost", signedPath: [Certificate]? = nil) -> ServedChainFacts {
        var results: [String: ChainResult] = [:]
        if let store = policy.chainStore, let chain { results[store.label] = chain }
        return ServedChainFacts(serverName: serverName, served: served.map(CertificateSummary.init),
                                chainResults: results, nameMatch: name,
                                signedPath: (signedPath ?? Array(served.prefix(1))).map(CertificateSummary.init))
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
            details: "pin mismatch: verified path pins \(served); configured \(configured)")))
    }

    // MARK: pins match only the verified path (a served certificate proves nothing)

    func testAPinnedIntermediateAppendedToAnotherAnchorsChainIsRefused() throws {
        let evilRoot = try fixture.certificate("evil-root.pem")
        let policy = try self.policy(publicKeyPinning([intermediate]), anchors: [root, evilRoot])
        let decision = policy.evaluate(facts(policy, served: [evilLeaf, intermediate],
                                             chain: .verified(chain: [evilLeaf, evilRoot].map(CertificateSummary.init))))
        let onPath = [evilLeaf, evilRoot].map { PublicKeyPin(of: $0).description }.joined(separator: ", ")
        XCTAssertEqual(decision, .refused(TrustRefusal(kind: .pinMismatch,
            details: "pin mismatch: verified path pins \(onPath); configured \(PublicKeyPin(of: intermediate))"
                + "; also served but not on the verified path, so not considered: \(PublicKeyPin(of: intermediate))")))
    }

    func testAllowInvalidRefusesAPinnedLeafAppendedToASelfSignedOne() throws {
        let policy = try self.policy(publicKeyPinning([leaf], allowInvalid: true))
        let decision = policy.evaluate(facts(policy, served: [selfSigned, leaf], chain: nil, signedPath: [selfSigned]))
        XCTAssertEqual(decision.refusal?.kind, .pinMismatch)
        XCTAssertEqual(decision.refusal?.details.hasPrefix("pin mismatch: verified path pins \(PublicKeyPin(of: selfSigned));"), true)
    }

    func testAllowInvalidAcceptsAPinOnTheSignedPath() throws {
        let policy = try self.policy(publicKeyPinning([intermediate], allowInvalid: true))
        XCTAssertEqual(policy.evaluate(facts(policy, served: [leaf, intermediate], chain: nil, signedPath: [leaf, intermediate])),
                       .trusted)
    }

    func testCertificatePinningRefusesAPinnedCertificateOutsideTheVerifiedPath() throws {
        // allow-invalid: the pinned leaf appended to a self-signed one.
        let allowInvalid = try self.policy(TrustSettings(pinning: .certificate, allowInvalidCertificates: true),
                                           anchors: [], pinned: [leaf])
        let appended = allowInvalid.evaluate(facts(allowInvalid, served: [selfSigned, leaf], chain: nil, signedPath: [selfSigned]))
        XCTAssertEqual(appended, .refused(TrustRefusal(kind: .pinMismatch,
            details: "pin mismatch: no certificate of the verified path equals a pinned one (verified path: \(selfSigned.subject);"
                + " pinned: \(leaf.subject)); also served but not on the verified path, so not considered: \(leaf.subject)")))
        // anchors_only false: a chain to a system root with the pinned intermediate appended.
        let withSystemRoots = try self.policy(TrustSettings(anchorsOnly: false, pinning: .certificate), anchors: [],
                                              pinned: [intermediate])
        let evilRoot = try fixture.certificate("evil-root.pem")
        let decision = withSystemRoots.evaluate(facts(withSystemRoots, served: [evilLeaf, intermediate],
                                                      chain: .verified(chain: [evilLeaf, evilRoot].map(CertificateSummary.init))))
        XCTAssertEqual(decision.refusal?.kind, .pinMismatch)
    }

    func testAPinCheckAfterAFailedChainHasNoPathToMatch() throws {
        let policy = try self.policy(publicKeyPinning([leaf]))
        let check = try XCTUnwrap(policy.checks.last as? PublicKeyPinCheck)
        let failed = facts(policy, served: [leaf, intermediate],
                           chain: .failed(ChainFailure(kind: .untrustedIssuer, details: "untrusted issuer")))
        XCTAssertEqual(check.refusal(for: failed)?.details.hasPrefix("pin mismatch: verified path pins none (the chain did not verify)"), true)
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
            details: "pin mismatch: no certificate of the verified path equals a pinned one (verified path: \(evilLeaf.subject);"
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
