import XCTest
@testable import CountersignTrust

/// The name-constraint arithmetic and the public suffix rules, as values.
final class DNSSubtreeTests: XCTestCase {
    func testAWildcardIsWithinABaseOnlyWhenEveryNameItStandsForIs() {
        XCTAssertTrue(DNSSubtree.isWithin("*.example.com", base: "example.com"))
        XCTAssertTrue(DNSSubtree.isWithin("*.a.example.com", base: "example.com"))
        XCTAssertFalse(DNSSubtree.isWithin("*.example.com", base: "foo.example.com"))
        XCTAssertTrue(DNSSubtree.isWithin("Foo.Example.COM.", base: "example.com"))
        XCTAssertFalse(DNSSubtree.isWithin("badexample.com", base: "example.com"))
        XCTAssertTrue(DNSSubtree.isWithin("anything.test", base: ""))
    }

    func testAWildcardMeetsAnExcludedBaseWhenAnyNameItStandsForIsInIt() {
        XCTAssertTrue(DNSSubtree.meets("*.example.com", base: "bar.example.com"))
        XCTAssertTrue(DNSSubtree.meets("*.example.com", base: "example.com"))
        XCTAssertFalse(DNSSubtree.meets("*.example.com", base: "a.bar.example.com"))
        XCTAssertFalse(DNSSubtree.meets("*.example.com", base: "other.com"))
        XCTAssertTrue(DNSSubtree.meets("x.bar.example.com", base: "bar.example.com"))
    }

    func testDNSNameSyntax() {
        for good in ["example.com", "*.example.com", "xn--n3h.com", "a-b.c0"] {
            XCTAssertTrue(DNSNameSyntax.isValidPresented(good), good)
        }
        for bad in [".example.com", "foo_bar.example.com", "*", "a.*.com", "-a.com", "a..com", "example.com.", "f*o.com"] {
            XCTAssertFalse(DNSNameSyntax.isValidPresented(bad), bad)
        }
        XCTAssertTrue(DNSNameSyntax.isValidConstraint(""))
        XCTAssertFalse(DNSNameSyntax.isValidConstraint(".example.com"))
        XCTAssertFalse(DNSNameSyntax.isValidConstraint("*.example.com"))
    }

    func testPublicSuffixRules() {
        let list = PublicSuffixList(rules: "// comment\nco.uk\n*.ck\n!www.ck\ns3.amazonaws.com\n", source: "test")
        XCTAssertTrue(list.isPublicSuffix("co.uk"))
        XCTAssertTrue(list.isPublicSuffix("CO.UK."))
        XCTAssertTrue(list.isPublicSuffix("com"), "the implicit * rule")
        XCTAssertFalse(list.isPublicSuffix("example.co.uk"))
        XCTAssertTrue(list.isPublicSuffix("anything.ck"))
        XCTAssertFalse(list.isPublicSuffix("www.ck"))
        XCTAssertTrue(list.isPublicSuffix("s3.amazonaws.com"))
        XCTAssertFalse(list.isPublicSuffix("amazonaws.com"))
    }

    func testTheBuiltInListKnowsTheCommonMultiLabelSuffixes() {
        let builtIn = PublicSuffixList(rules: PublicSuffixList.builtIn, source: "built-in list")
        for suffix in ["co.uk", "com.au", "co.jp", "github.io", "s3.amazonaws.com", "foo.ck"] {
            XCTAssertTrue(builtIn.isPublicSuffix(suffix), suffix)
        }
        XCTAssertFalse(builtIn.isPublicSuffix("www.ck"))
        XCTAssertFalse(builtIn.isPublicSuffix("example.co.uk"))
    }

    func testAddressSpellingsInACommonName() {
        XCTAssertEqual(CommonNameAddressCheck.canonicalAddress("0xC0A80101"), "192.168.1.1")
        XCTAssertEqual(CommonNameAddressCheck.canonicalAddress("192.168.001.001"), "192.168.1.1")
        XCTAssertEqual(CommonNameAddressCheck.canonicalAddress("2001:DB8::1"), "2001:db8::1")
        XCTAssertNil(CommonNameAddressCheck.canonicalAddress("12345"), "a bare number is a label, not an address")
        XCTAssertNil(CommonNameAddressCheck.canonicalAddress("example.com"))
        XCTAssertNil(CommonNameAddressCheck.canonicalAddress("Billing service"))
    }

    func testKeyStrengthRules() {
        XCTAssertNil(KeyStrengthCheck.weakness(of: .rsa(bits: 2048)))
        XCTAssertNotNil(KeyStrengthCheck.weakness(of: .rsa(bits: 2047)))
        XCTAssertNotNil(KeyStrengthCheck.weakness(of: .rsa(bits: 2052)))
        XCTAssertNil(KeyStrengthCheck.weakness(of: .ec(curve: "secp384r1")))
        XCTAssertNotNil(KeyStrengthCheck.weakness(of: .ec(curve: "brainpoolP256r1")))
        XCTAssertNotNil(KeyStrengthCheck.weakness(of: .ec(curve: nil)))
        XCTAssertNil(KeyStrengthCheck.weakness(of: .ed25519))
        XCTAssertNotNil(KeyStrengthCheck.weakness(of: .dsa(bits: 2048)))
    }
}
