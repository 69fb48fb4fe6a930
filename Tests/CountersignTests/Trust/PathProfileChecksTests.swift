import XCTest
@testable import CountersignTrust

/// The path checks on real certificates from x509-limbo: each case was trusted before its
/// check existed (OpenSSL's X509_verify_cert accepts it), and the refusal is the sentence a
/// user sees in Proxy-Status.
final class PathProfileChecksTests: XCTestCase {
    let limbo = LimboCases.shared

    func assertRefused(_ id: String, _ details: String, kind: TrustRefusal.Kind = .invalidChain,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try limbo.decide(id), .refused(TrustRefusal(kind: kind, details: details)), id, file: file, line: line)
    }

    // --- name constraints ---

    func testAWildcardSANThatCouldNameAnExcludedHostIsRefused() throws {
        // CVE-2025-61727: the ICA excludes bar.example.com; the leaf is *.example.com.
        let details = try limbo.decide("cve::cve-2025-61727").refusal?.details ?? "trusted"
        XCTAssertTrue(details.hasPrefix("name constraints: the certificate names *.example.com, which certificate"
            + " CN=x509-limbo-intermediate-pathlen-None,"), details)
        XCTAssertTrue(details.hasSuffix(" excludes (bar.example.com)"), details)
    }

    func testAWildcardSANWiderThanThePermittedSubtreeIsRefused() {
        // OpenSSL compares the wildcard as a literal string: *.example.com is "within" nothing
        // it could tell apart from foo.example.com's subtree (its CN check refuses limbo's own
        // variant first, so the facts are built here).
        let check = NameConstraintsCheck(storeLabel: "anchors")
        func facts(leafNames: [String], permitted: [String], excluded: [String] = []) -> ServedChainFacts {
            var leaf = summary("CN=leaf")
            leaf.dnsNames = leafNames
            var intermediate = summary("CN=ICA")
            intermediate.profile.nameConstraints = .init(permittedDNS: permitted, excludedDNS: excluded,
                                                         subtreeCount: permitted.count + excluded.count)
            return ServedChainFacts(serverName: "foo.example.com", served: [leaf, intermediate],
                                    chainResults: ["anchors": .verified(chain: [leaf, intermediate, summary("CN=root")])],
                                    nameMatch: .matched)
        }
        XCTAssertEqual(check.refusal(for: facts(leafNames: ["*.example.com"], permitted: ["foo.example.com"]))?.details,
                       "name constraints: the certificate names *.example.com, outside what certificate CN=ICA permits (foo.example.com)")
        XCTAssertNil(check.refusal(for: facts(leafNames: ["*.example.com"], permitted: ["example.com"])))
        XCTAssertNil(check.refusal(for: facts(leafNames: ["*.example.com"], permitted: ["example.com"], excluded: ["a.bar.example.com"])))
        XCTAssertNotNil(check.refusal(for: facts(leafNames: ["foo.example.com", "*.other.com"], permitted: ["example.com"])))
    }

    private func summary(_ subject: String) -> CertificateSummary {
        CertificateSummary(subject: subject, issuer: "", notAfter: 0, pin: try! PublicKeyPin(sha256: [UInt8](repeating: 0, count: 32)),
                           sha256: [])
    }

    func testMalformedOrEmptyNameConstraintsAreRefused() throws {
        try assertRefused("rfc5280::nc::invalid-dnsname-leading-period",
                          "name constraints: certificate CN=x509-limbo-root has a malformed DNS name constraint \".example.com\"")
        let empty = try limbo.decide("webpki::nc::intermediate-permitted-excluded-subtrees-both-empty-sequences")
        XCTAssertTrue(empty.refusal?.details.hasSuffix("has a name constraints extension without any subtree") == true, "\(empty)")
    }

    func testNameConstraintsInTheLeafAreRefused() throws {
        for id in ["rfc5280::nc::not-allowed-in-ee-critical", "rfc5280::nc::not-allowed-in-ee-noncritical"] {
            try assertRefused(id, "not a server certificate: the certificate carries name constraints, which only a CA certificate may")
        }
    }

    func testAnotherServedIntermediateIsTriedWhenOpenSSLsPathFails() throws {
        // OpenSSL picks the first ICA_B (no root / forbidden by ICA_A's constraints) and gives up.
        XCTAssertEqual(try limbo.decide("rfc5280::nc::nc-forbids-alternate-chain-ica"), .trusted)
        XCTAssertEqual(try limbo.decide("rfc5280::nc::nc-forbids-same-chain-ica"), .trusted)
    }

    // --- keys ---

    func testWeakKeysAnywhereInThePathAreRefused() throws {
        try assertRefused("webpki::forbidden-weak-rsa-in-leaf",
                          "weak key: the certificate has a 1024-bit RSA key (at least 2048 bits are required)")
        try assertRefused("webpki::forbidden-p192-root",
                          "weak key: certificate CN=x509-limbo-root has an EC key on curve prime192v1 (P-256, P-384 or P-521 are required)")
        let dsa = try limbo.decide("webpki::forbidden-dsa-leaf")
        XCTAssertTrue(dsa.refusal?.details.hasPrefix("weak key: the certificate has a") == true, "\(dsa)")
        XCTAssertTrue(dsa.refusal?.details.hasSuffix("DSA key (DSA is not accepted)") == true, "\(dsa)")
        let odd = try limbo.decide("webpki::forbidden-rsa-key-not-divisible-by-8-in-leaf")
        XCTAssertTrue(odd.refusal?.details.hasSuffix("RSA key (the modulus must be a whole number of bytes)") == true, "\(odd)")
    }

    // --- the leaf's role ---

    func testALeafThatIsACAIsRefused() throws {
        try assertRefused("webpki::ee-basicconstraints-ca",
                          "not a server certificate: the certificate is a CA certificate (basicConstraints cA=TRUE), not a server certificate")
    }

    func testASelfSignedCALeafConfiguredAsTheAnchorIsTrustedAsConfigured() throws {
        // `openssl req -x509` makes cA=TRUE certificates; an operator who anchors or pins one trusts it as is.
        let leaf = try limbo.testcase("webpki::ee-basicconstraints-ca").served[0]
        let policy = try TrustPolicy(settings: TrustSettings(), material: TrustMaterial(anchors: [leaf]))
        let facts = policy.gatherFacts(served: [leaf], serverName: "example.com", at: try limbo.testcase("webpki::ee-basicconstraints-ca").time)
        XCTAssertEqual(policy.evaluate(facts), .trusted)
    }

    func testALeafAllowingAnyPurposeIsRefused() throws {
        try assertRefused("webpki::eku::ee-anyeku",
                          "not a server certificate: the certificate allows any purpose (extendedKeyUsage anyExtendedKeyUsage)")
    }

    func testALeafWithoutExtendedKeyUsageIsAcceptedAsADeliberateDifference() throws {
        XCTAssertEqual(try limbo.decide("rfc5280::eku::ee-without-eku"), .trusted)
    }

    func testStrictModeRefusesALeafWithKeyCertSignAndACAWithoutKeyIdentifiers() throws {
        // X509_V_FLAG_X509_STRICT on every trust store.
        XCTAssertEqual(try limbo.decide("rfc5280::leaf-ku-keycertsign").refusal?.kind, .invalidChain)
        XCTAssertEqual(try limbo.decide("rfc5280::ski::intermediate-missing-ski").refusal?.kind, .invalidChain)
        XCTAssertEqual(try limbo.decide("rfc5280::root-non-critical-basic-constraints").refusal?.kind, .invalidChain)
    }

    // --- names ---

    func testAMatchOnlyThroughAWildcardOverAPublicSuffixIsRefused() throws {
        let decision = try limbo.decide("webpki::san::public-suffix-multi-label-wildcard-san")
        XCTAssertEqual(decision.refusal?.kind, .nameMismatch)
        XCTAssertTrue(decision.refusal?.details.contains("matches only the wildcard *.co.uk, and co.uk is a public suffix") == true,
                      "\(decision)")
        // Amazon's certificate also names s3.amazonaws.com itself, which matches.
        XCTAssertEqual(try limbo.decide("online::s3.amazonaws.com"), .trusted)
    }

    func testMalformedDNSNamesInTheLeafAreRefused() throws {
        try assertRefused("rfc5280::nc::nc-permits-invalid-dns-san",
                          "malformed certificate: the subjectAltName \".example.com\" is not a valid DNS name")
        try assertRefused("rfc5280::san::underscore-dns",
                          "malformed certificate: the subjectAltName \"foo_bar.example.com\" is not a valid DNS name")
    }

    func testACommonNameSpellingAnAddressDifferentlyIsRefused() throws {
        try assertRefused("webpki::cn::ipv4-hex-mismatch",
                          "misissued certificate: its common name 0xC0A80101 is the address 192.168.1.1, which must be"
                              + " written as one of its subjectAltName addresses (192.168.1.1)")
        XCTAssertEqual(try limbo.decide("webpki::cn::ipv6-uncompressed-mismatch").refusal?.kind, .invalidChain)
    }

    // --- malformed certificates ---

    func testMalformedSerialsKeyIdentifiersAndExtensionsAreRefused() throws {
        try assertRefused("rfc5280::serial::zero", "malformed certificate: the certificate has a serial number that is not positive")
        try assertRefused("webpki::aki::root-with-aki-ski-mismatch",
            "malformed certificate: certificate CN=x509-limbo-root has a self-signed authorityKeyIdentifier that does not match its subjectKeyIdentifier")
        try assertRefused("webpki::malformed-aia", "malformed certificate: the certificate has an undecodable Authority Information Access extension")
        let policyConstraints = try limbo.decide("rfc5280::pc::ica-noncritical-pc")
        XCTAssertTrue(policyConstraints.refusal?.details.hasSuffix("has a policyConstraints extension not marked critical") == true,
                      "\(policyConstraints)")
    }

    // --- validity ---

    func testTheNotAfterSecondItselfIsStillValid() throws {
        XCTAssertEqual(try limbo.decide("rfc5280::validity::notafter-exact"), .trusted)
        XCTAssertEqual(try limbo.decide("rfc5280::validity::expired-1-second").refusal?.kind, .expired)
    }
}

/// The path checks must not refuse the operating system's own roots as anchors: Debian's
/// store has roots with serial 0, issuer-and-serial key identifiers and old extensions.
final class SystemRootsAsAnchorsTests: XCTestCase {
    func testEveryDebianRootPassesThePathChecksAsTheAnchor() throws {
        let bundle = "/etc/ssl/certs/ca-certificates.crt"
        guard FileManager.default.fileExists(atPath: bundle) else { throw XCTSkip("no \(bundle)") }
        let roots = try Certificate.loadPEMFile(path: bundle)
        XCTAssertGreaterThan(roots.count, 50)
        var leaf = CertificateSummary(subject: "CN=leaf", issuer: "", notAfter: 0,
                                      pin: try PublicKeyPin(sha256: [UInt8](repeating: 0, count: 32)), sha256: [])
        leaf.profile = CertificateProfile(publicKey: .ec(curve: "prime256v1"), serialLength: 16, serialIsPositive: true)
        leaf.dnsNames = ["example.com"]
        let checks = PathProfileChecks.make(storeLabel: "system roots", validateDomain: true)
        for root in roots {
            let facts = ServedChainFacts(serverName: "example.com", served: [leaf],
                                         chainResults: ["system roots": .verified(chain: [leaf, CertificateSummary(root)])],
                                         nameMatch: .matched)
            for check in checks {
                XCTAssertNil(check.refusal(for: facts), "\(root.subject): \(type(of: check))")
            }
        }
    }
}
