import Foundation
import XCTest
@testable import CountersignInterception

/// Leaves judged by `openssl verify` with only the CA as trust.
final class LeafVerificationTests: XCTestCase {
    private func verify(_ host: String, hosts: [String]?, options: [String] = []) throws -> OpenSSLTool.Outcome {
        let directory = try TemporaryDirectory()
        let ca = try InterceptionCA.make(in: directory, hosts: hosts)
        let key = try P256Key.generate()
        let leaf = try LeafFactory.mint(for: XCTUnwrap(HostLiteral(host)), ca: ca, key: key, now: Date())
        return try OpenSSLTool.verify(leafPEM: leaf.certificatePEM, caPath: ca.certificatePath, in: directory, options: options)
    }

    func testALeafForAListedHostVerifies() throws {
        let outcome = try verify("api.example.com", hosts: ["api.example.com"], options: ["-verify_hostname", "api.example.com"])
        XCTAssertEqual(outcome.status, 0, outcome.output)
    }

    func testALeafForAnUnlistedNameViolatesThePermittedSubtree() throws {
        let outcome = try verify("www.example.com", hosts: ["api.example.com"])
        XCTAssertNotEqual(outcome.status, 0)
        XCTAssertTrue(outcome.output.contains("permitted subtree violation"), outcome.output)
    }

    func testWildcardPatternsAdmitTheirSubdomainsOnly() throws {
        XCTAssertEqual(try verify("a.b.example.com", hosts: ["*.example.com"]).status, 0)
        let outside = try verify("example.org", hosts: ["*.example.com"])
        XCTAssertTrue(outside.output.contains("permitted subtree violation"), outside.output)
    }

    func testIPv4AndIPv6LiteralLeavesVerify() throws {
        let v4 = try verify("192.0.2.10", hosts: ["api.example.com", "192.0.2.10"], options: ["-verify_ip", "192.0.2.10"])
        XCTAssertEqual(v4.status, 0, v4.output)
        let v6 = try verify("[2001:db8::10]", hosts: ["[2001:db8::10]:443"], options: ["-verify_ip", "2001:db8::10"])
        XCTAssertEqual(v6.status, 0, v6.output)
    }

    func testAnUnlistedIPAddressIsRefused() throws {
        let otherAddress = try verify("192.0.2.11", hosts: ["192.0.2.10"])
        XCTAssertTrue(otherAddress.output.contains("permitted subtree violation"), otherAddress.output)
        let noAddresses = try verify("192.0.2.11", hosts: ["api.example.com"])
        XCTAssertTrue(noAddresses.output.contains("excluded subtree violation"), noAddresses.output)
    }

    func testAnUnconstrainedCAVerifiesAnyName() throws {
        XCTAssertEqual(try verify("anything.invalid", hosts: nil).status, 0)
        XCTAssertEqual(try verify("198.51.100.7", hosts: nil).status, 0)
    }

    func testTheLeafCarriesTheServerProfile() throws {
        let directory = try TemporaryDirectory()
        let ca = try InterceptionCA.make(in: directory, hosts: ["api.example.com"])
        let minter = try LeafMinter(ca: ca)
        let leaf = try minter.leaf(for: "api.example.com")
        let path = try directory.write(leaf.certificatePEM, to: "leaf.pem")
        let text = try OpenSSLTool.text(ofCertificate: path)
        for expected in ["Subject: CN = api.example.com", "Issuer: CN = Countersign interception CA (testhost)",
                         "ecdsa-with-SHA256", "NIST CURVE: P-256", "CA:FALSE", "Digital Signature",
                         "TLS Web Server Authentication", "DNS:api.example.com",
                         "X509v3 Subject Key Identifier", "X509v3 Authority Key Identifier"] {
            XCTAssertTrue(text.contains(expected), "missing \(expected) in\n\(text)")
        }
        XCTAssertEqual(leaf.notAfter.timeIntervalSince(leaf.notBefore), 7 * 24 * 3600 + 3600, accuracy: 2)
    }

    func testTheLeafNeverOutlivesTheCA() throws {
        let directory = try TemporaryDirectory()
        let twoDaysBeforeExpiry = Date(timeIntervalSinceNow: -InterceptionCA.validity + 2 * 24 * 3600)
        let ca = try InterceptionCA.make(in: directory, hosts: nil, now: twoDaysBeforeExpiry)
        let leaf = try LeafMinter(ca: ca).leaf(for: "api.example.com")
        XCTAssertEqual(leaf.notAfter, ca.notAfter)
    }
}
