import XCTest
@testable import CountersignInterception

final class NameConstraintsTests: XCTestCase {
    private let everyIPv4 = GeneralSubtree.ipNetwork(address: [0, 0, 0, 0], prefixLength: 0)
    private let everyIPv6 = GeneralSubtree.ipNetwork(address: [UInt8](repeating: 0, count: 16), prefixLength: 0)

    func testExactHostBecomesItsDomainAndIPAddressesAreExcluded() throws {
        let constraints = try NameConstraints.permitting(hostPatterns: ["API.example.com"])
        XCTAssertEqual(constraints.permitted, [.dnsName("api.example.com")])
        XCTAssertEqual(constraints.excluded, [everyIPv4, everyIPv6])
    }

    func testWildcardBecomesTheParentDomainAndCoversListedSubdomains() throws {
        let constraints = try NameConstraints.permitting(hostPatterns: ["api.example.com", "*.example.com", "other.test:8443"])
        XCTAssertEqual(constraints.permitted, [.dnsName("example.com"), .dnsName("other.test")])
    }

    func testIPLiteralsBecomeSingleAddressNetworksAndPortsAreIgnored() throws {
        let constraints = try NameConstraints.permitting(hostPatterns: ["10.0.0.1:443", "[2001:db8::1]:8443", "::1"])
        var loopback = [UInt8](repeating: 0, count: 16)
        loopback[15] = 1
        XCTAssertEqual(constraints.permitted, [
            .ipNetwork(address: [10, 0, 0, 1], prefixLength: 32),
            .ipNetwork(address: [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1], prefixLength: 128),
            .ipNetwork(address: loopback, prefixLength: 128),
        ])
        XCTAssertEqual(constraints.excluded, [.dnsName("")], "with no DNS pattern, every DNS name is excluded")
    }

    func testAPatternThatIsNoHostIsRefusedByName() {
        XCTAssertThrowsError(try NameConstraints.permitting(hostPatterns: ["api example.com"])) { error in
            XCTAssertEqual("\(error)", "the host pattern \"api example.com\" is not a DNS name, a *.suffix wildcard or an IP literal")
        }
        XCTAssertThrowsError(try NameConstraints.permitting(hostPatterns: ["*.bad_suffix..com"]))
    }

    func testPermitsFollowsRFC5280Subtrees() throws {
        let constraints = try NameConstraints.permitting(hostPatterns: ["api.example.com", "*.corp.test", "10.0.0.1"])
        XCTAssertTrue(constraints.permits(host: "api.example.com"))
        XCTAssertTrue(constraints.permits(host: "API.EXAMPLE.COM."))
        XCTAssertTrue(constraints.permits(host: "v2.api.example.com"), "a DNS subtree admits names below it")
        XCTAssertTrue(constraints.permits(host: "a.b.corp.test"))
        XCTAssertTrue(constraints.permits(host: "corp.test"), "the wildcard's subtree admits its apex too")
        XCTAssertFalse(constraints.permits(host: "example.com"))
        XCTAssertFalse(constraints.permits(host: "evilapi.example.com"))
        XCTAssertFalse(constraints.permits(host: "api.example.com.evil.test"))
        XCTAssertTrue(constraints.permits(host: "10.0.0.1"))
        XCTAssertFalse(constraints.permits(host: "10.0.0.2"))
        XCTAssertFalse(constraints.permits(host: "::1"), "an IPv4 network binds IPv6 addresses too")
        XCTAssertFalse(constraints.permits(host: "not a host"))
    }

    func testConfiguredPatternsCanBeCheckedWhole() throws {
        let constraints = try NameConstraints.permitting(hostPatterns: ["*.example.com", "10.0.0.1"])
        XCTAssertTrue(constraints.permits(host: "*.example.com"))
        XCTAssertTrue(constraints.permits(host: "*.api.example.com"))
        XCTAssertTrue(constraints.permits(host: "api.example.com:8443"))
        XCTAssertTrue(constraints.permits(host: "10.0.0.1:443"))
        XCTAssertFalse(constraints.permits(host: "*.com"), "only some names below .com are permitted")
        XCTAssertFalse(constraints.permits(host: "*.example.org"))
        let withExclusion = NameConstraints(permitted: [.dnsName("example.com")], excluded: [.dnsName("secret.example.com")])
        XCTAssertFalse(withExclusion.permits(host: "*.example.com"), "an excluded name lies below the wildcard")
        XCTAssertTrue(withExclusion.permits(host: "*.api.example.com"))
    }

    func testNoPatternsPermitNothing() throws {
        let constraints = try NameConstraints.permitting(hostPatterns: [])
        XCTAssertFalse(constraints.permits(host: "example.com"))
        XCTAssertFalse(constraints.permits(host: "127.0.0.1"))
        XCTAssertFalse(constraints.permits(host: "::1"))
    }

    func testLeadingDotSubtreeFromAnotherToolMeansSubdomainsOnly() {
        let constraints = NameConstraints(permitted: [.dnsName(".example.com")], excluded: [])
        XCTAssertTrue(constraints.permits(host: "a.example.com"))
        XCTAssertFalse(constraints.permits(host: "example.com"))
    }

    func testDescriptionListsSubtrees() throws {
        let constraints = try NameConstraints.permitting(hostPatterns: ["api.example.com", "192.0.2.1"])
        XCTAssertEqual(constraints.description, "permitted DNS:api.example.com, IP:192.0.2.1/32; excluded IP:::/0")
    }
}
