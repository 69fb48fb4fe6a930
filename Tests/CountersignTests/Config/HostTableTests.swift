import XCTest
@testable import CountersignConfig

final class HostTableTests: XCTestCase {
    /// Each entry is tagged by its pattern so a lookup shows which one won.
    private let table = HostTable([
        "api.example.com:8443", "api.example.com", "*.example.com", "*.eu.example.com",
        "*.example.com:9443", "10.0.0.5", "[::1]:8443", "::2", "Mixed.Case.Org",
    ].map { HostConfig(pattern: $0) })

    private func winner(_ host: String, _ port: UInt16) -> String? {
        table.lookup(host: host, port: port)?.pattern
    }

    func testPrecedenceTable() {
        let cases: [(host: String, port: UInt16, expected: String?)] = [
            ("api.example.com", 8443, "api.example.com:8443"),      // host:port beats host
            ("api.example.com", 443, "api.example.com"),            // host beats wildcard
            ("www.example.com", 443, "*.example.com"),              // wildcard, one label
            ("a.b.example.com", 443, "*.example.com"),              // wildcard, several labels
            ("x.eu.example.com", 443, "*.eu.example.com"),          // longest wildcard wins
            ("eu.example.com", 443, "*.example.com"),               // bare suffix of the longer one
            ("example.com", 443, nil),                              // a wildcard never matches its bare suffix
            ("www.example.com", 9443, "*.example.com:9443"),        // port-specific wildcard first
            ("x.eu.example.com", 9443, "*.eu.example.com"),         // ...but a longer suffix still wins
            ("notexample.com", 443, nil),                           // suffixes match whole labels only
            ("API.EXAMPLE.COM", 8443, "api.example.com:8443"),      // case-insensitive
            ("www.example.com.", 443, "*.example.com"),             // trailing dot
            ("mixed.case.org", 80, "Mixed.Case.Org"),
            ("10.0.0.5", 80, "10.0.0.5"),
            ("10.0.0.6", 80, nil),
            ("::1", 8443, "[::1]:8443"),                            // IPv6 with and without brackets
            ("[::1]", 8443, "[::1]:8443"),
            ("0:0::1", 8443, "[::1]:8443"),                         // any spelling of the address
            ("::1", 443, nil),
            ("[::2]", 443, "::2"),
            ("other.org", 443, nil),
        ]
        for c in cases {
            XCTAssertEqual(winner(c.host, c.port), c.expected, "\(c.host) port \(c.port)")
        }
    }

    func testEmptyTable() {
        XCTAssertNil(HostTable([]).lookup(host: "a.example.com", port: 443))
        XCTAssertTrue(HostTable([]).isEmpty)
    }

    func testEntriesKeepFileOrder() {
        XCTAssertEqual(table.entries.first?.pattern, "api.example.com:8443")
        XCTAssertEqual(table.entries.count, 9)
    }

    func testPatternsParse() throws {
        let wildcard = try HostPattern(parsing: "*.Example.com:8443")
        XCTAssertTrue(wildcard.isWildcard)
        XCTAssertEqual(wildcard.host, "example.com")
        XCTAssertEqual(wildcard.port, 8443)
        XCTAssertEqual(try HostPattern(parsing: "[::0001]:443").description, "[::1]:443")
        XCTAssertThrowsError(try HostPattern(parsing: "*"))
        XCTAssertThrowsError(try HostPattern(parsing: "*.10.0.0.1"))
        XCTAssertThrowsError(try HostPattern(parsing: "a..b"))
        XCTAssertThrowsError(try HostPattern(parsing: "host:http"))
    }
}
