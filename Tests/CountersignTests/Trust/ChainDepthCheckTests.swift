import XCTest
@testable import CountersignTrust

/// `max_chain_depth` over the verified path: intermediates between the leaf and the anchor
/// count, self-issued ones (a CA re-keying under its own name) do not, and what the server
/// merely sent beyond the path never does.
final class ChainDepthCheckTests: XCTestCase {
    func summary(_ subject: String, issuedBy issuer: String) throws -> CertificateSummary {
        let leaf = try PKIFixture.shared.certificate("leaf.pem")
        return CertificateSummary(subject: subject, issuer: issuer, notAfter: 0, pin: PublicKeyPin(of: leaf),
                                  sha256: Array(subject.utf8))
    }

    func path(_ names: [(String, String)]) throws -> [CertificateSummary] {
        try names.map { try summary($0.0, issuedBy: $0.1) }
    }

    func testDepthZeroAllowsOnlyALeafIssuedByTheAnchor() throws {
        let check = ChainDepthCheck(maxIntermediates: 0, storeLabel: "anchors")
        XCTAssertNil(check.refusal(path: try path([("CN=leaf", "CN=root"), ("CN=root", "CN=root")])))
        let refusal = check.refusal(path: try path([("CN=leaf", "CN=ica"), ("CN=ica", "CN=root"), ("CN=root", "CN=root")]))
        XCTAssertEqual(refusal, TrustRefusal(kind: .invalidChain,
            details: "chain too deep: the verified path has 1 intermediate (CN=ica), max_chain_depth is 0"))
    }

    func testSelfIssuedIntermediatesDoNotCount() throws {
        let check = ChainDepthCheck(maxIntermediates: 1, storeLabel: "anchors")
        let rekeyed = try path([("CN=leaf", "CN=ica"), ("CN=ica", "CN=ica"), ("CN=ica", "CN=root"), ("CN=root", "CN=root")])
        XCTAssertNil(check.refusal(path: rekeyed))
        let twoCAs = try path([("CN=leaf", "CN=ica2"), ("CN=ica2", "CN=ica1"), ("CN=ica1", "CN=root"), ("CN=root", "CN=root")])
        XCTAssertEqual(check.refusal(path: twoCAs)?.details,
                       "chain too deep: the verified path has 2 intermediates (CN=ica2; CN=ica1), max_chain_depth is 1")
    }

    func testThePolicyAppliesTheBoundOnlyWhenConfigured() throws {
        let root = try PKIFixture.shared.certificate("root.pem")
        let unbounded = try TrustPolicy(settings: TrustSettings(), material: TrustMaterial(anchors: [root]))
        XCTAssertFalse(unbounded.checks.contains { $0 is ChainDepthCheck })
        let bounded = try TrustPolicy(settings: TrustSettings(maxChainDepth: 0), material: TrustMaterial(anchors: [root]))
        let leaf = try PKIFixture.shared.certificates("leaf-chain.pem")
        // The fixture's leaf is issued by an intermediate under the root: one intermediate, bound 0.
        let decision = bounded.assess(served: leaf, serverName: "localhost").decision
        XCTAssertEqual(decision.refusal?.kind, .invalidChain)
        XCTAssertEqual(decision.refusal?.details.hasPrefix("chain too deep: the verified path has 1 intermediate"), true)
        let one = try TrustPolicy(settings: TrustSettings(maxChainDepth: 1), material: TrustMaterial(anchors: [root]))
        XCTAssertEqual(one.assess(served: leaf, serverName: "localhost").decision, .trusted)
    }
}
