import XCTest
@testable import CountersignTrust

/// RFC 6125 §6.4 reference identity matching, subjectAltName only.
final class HostnameMatcherTests: XCTestCase {
    struct Row {
        let reference: String
        let dns: [String]
        let ips: [String]
        let matches: Bool
        let line: UInt
        init(_ reference: String, dns: [String] = [], ips: [String] = [], _ matches: Bool, line: UInt = #line) {
            self.reference = reference
            self.dns = dns
            self.ips = ips
            self.matches = matches
            self.line = line
        }
    }

    let table: [Row] = [
        Row("api.example.com", dns: ["api.example.com"], true),
        Row("API.Example.COM", dns: ["api.example.com"], true),
        Row("api.example.com", dns: ["API.EXAMPLE.COM"], true),
        Row("api.example.com.", dns: ["api.example.com"], true),
        Row("api.example.com", dns: ["www.example.com", "api.example.com"], true),
        Row("api.example.com", dns: ["example.com"], false),
        Row("example.com", dns: ["api.example.com"], false),
        // Wildcards: whole left-most label, exactly one label.
        Row("api.example.com", dns: ["*.example.com"], true),
        Row("API.example.com", dns: ["*.EXAMPLE.com"], true),
        Row("example.com", dns: ["*.example.com"], false),
        Row("a.b.example.com", dns: ["*.example.com"], false),
        Row("api.example.com", dns: ["api.*.com"], false),
        Row("api.example.com", dns: ["a*.example.com"], false),
        Row("api.example.com", dns: ["*pi.example.com"], false),
        Row("api.example.com", dns: ["*.*.com"], false),
        Row("example.com", dns: ["*.com"], false),
        Row("com", dns: ["*"], false),
        Row("*.example.com", dns: ["*.example.com"], false),
        Row(".example.com", dns: ["*.example.com"], false),
        Row("", dns: ["example.com"], false),
        // No CN fallback: a certificate without SAN DNS names matches no name.
        Row("api.example.com", dns: [], false),
        // IP literals match iPAddress entries only, by value.
        Row("127.0.0.1", ips: ["127.0.0.1"], true),
        Row("127.0.0.1", dns: ["127.0.0.1"], false),
        Row("127.0.0.1", ips: ["127.0.0.2"], false),
        Row("::1", ips: ["0:0:0:0:0:0:0:1"], true),
        Row("[::1]", ips: ["::1"], true),
        Row("10.0.0.1", dns: ["*.0.0.1"], false),
        Row("api.example.com", ips: ["93.184.216.34"], false),
    ]

    func testTable() {
        for row in table {
            XCTAssertEqual(HostnameMatcher.matches(row.reference, dnsNames: row.dns, ipAddresses: row.ips), row.matches,
                           "\(row.reference) vs \(row.dns + row.ips)", line: row.line)
        }
    }

    func testMismatchListsThePresentedNames() {
        XCTAssertEqual(HostnameMatcher.match("api.example.com", dnsNames: ["api.other.com"], ipAddresses: ["10.0.0.1"]),
                       .mismatch(presented: ["api.other.com", "10.0.0.1"]))
    }
}
