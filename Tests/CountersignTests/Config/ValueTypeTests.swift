import XCTest
import CountersignSupport
@testable import CountersignConfig

/// Addresses, address blocks, URLs and durations.
final class ValueTypeTests: XCTestCase {
    func testIPAddressParsingAndCanonicalText() {
        XCTAssertEqual(IPAddress("192.168.1.20"), .v4([192, 168, 1, 20]))
        XCTAssertEqual(IPAddress("::1"), .v6(Array(repeating: 0, count: 15) + [1]))
        XCTAssertEqual(IPAddress("[2001:db8::1]")?.description, "2001:db8::1")
        XCTAssertEqual(IPAddress("2001:DB8:0:0:1:0:0:1")?.description, "2001:db8::1:0:0:1")
        XCTAssertEqual(IPAddress("::ffff:10.1.2.3"), .v6(Array(repeating: 0, count: 10) + [0xFF, 0xFF, 10, 1, 2, 3]))
        XCTAssertEqual(IPAddress("::")?.description, "::")
        XCTAssertEqual(IPAddress("1:2:3:4:5:6:7:8")?.description, "1:2:3:4:5:6:7:8")
        for bad in ["256.1.1.1", "1.2.3", "01.2.3.4", "1:2:3:4:5:6:7:8:9", "1::2::3", "fe80::1%eth0", "12345::", "host", ""] {
            XCTAssertNil(IPAddress(bad), bad)
        }
    }

    func testCIDRContainment() throws {
        let v4 = try CIDR(parsing: "10.1.0.0/16")
        XCTAssertTrue(v4.contains(IPAddress("10.1.255.7")!))
        XCTAssertFalse(v4.contains(IPAddress("10.2.0.1")!))
        XCTAssertTrue(v4.contains(IPAddress("::ffff:10.1.2.3")!), "IPv4-mapped clients of dual-stack sockets")
        XCTAssertFalse(v4.contains(IPAddress("::10.1.2.3")!), "IPv4-compatible is not mapped")
        XCTAssertFalse(v4.contains(IPAddress("2001:db8::1")!))

        let v6 = try CIDR(parsing: "2001:db8::/32")
        XCTAssertTrue(v6.contains(IPAddress("2001:db8:ffff::1")!))
        XCTAssertFalse(v6.contains(IPAddress("2001:db9::1")!))
        XCTAssertFalse(v6.contains(IPAddress("10.0.0.1")!))

        let loopback6 = try CIDR(parsing: "::1/128")
        XCTAssertTrue(loopback6.contains(IPAddress("::1")!))
        XCTAssertFalse(loopback6.contains(IPAddress("::2")!))

        let mapped = try CIDR(parsing: "::ffff:0:0/96")
        XCTAssertTrue(mapped.contains(IPAddress("192.0.2.1")!), "IPv4 addresses match blocks covering their mapped form")

        let odd = try CIDR(parsing: "192.168.0.0/23")
        XCTAssertTrue(odd.contains(IPAddress("192.168.1.255")!))
        XCTAssertFalse(odd.contains(IPAddress("192.168.2.0")!))

        XCTAssertTrue(try CIDR(parsing: "0.0.0.0/0").contains(IPAddress("203.0.113.9")!))
    }

    func testBareAddressesAreSingleHosts() throws {
        XCTAssertEqual(try CIDR(parsing: "10.0.0.1").prefixLength, 32)
        XCTAssertEqual(try CIDR(parsing: "::1").prefixLength, 128)
        XCTAssertFalse(try CIDR(parsing: "10.0.0.1").contains(IPAddress("10.0.0.2")!))
    }

    /// A configured pin whose base64 begins with `/` is read in both forms, curl's and HPKP's.
    func testPinsWhoseBase64BeginsWithASlash() throws {
        let digest = [UInt8(0xFF)] + [UInt8](repeating: 7, count: 31)
        let encoded = Base64.encode(digest)
        XCTAssertEqual(encoded.first, "/")
        XCTAssertEqual(try PinParser.sha256(from: "sha256//" + encoded), digest)
        XCTAssertEqual(try PinParser.sha256(from: "sha256/" + encoded), digest)
        XCTAssertThrowsError(try PinParser.sha256(from: "sha256///" + encoded))
    }

    func testBadCIDRs() {
        XCTAssertThrowsError(try CIDR(parsing: "10.0.0.0/33")) { XCTAssertTrue("\($0)".contains("0 to 32")) }
        XCTAssertThrowsError(try CIDR(parsing: "10.1.2.3/16")) { XCTAssertTrue("\($0)".contains("\"10.1.0.0/16\"")) }
        XCTAssertThrowsError(try CIDR(parsing: "example.com/8"))
        XCTAssertThrowsError(try CIDR(parsing: "10.0.0.0/+8"))
    }

    func testDefaultAllowListIsLoopback() {
        let listener = ListenerConfig(address: ListenAddress(host: "127.0.0.1", port: 1))
        XCTAssertTrue(listener.allows(IPAddress("127.0.0.1")!))
        XCTAssertTrue(listener.allows(IPAddress("127.8.9.10")!))
        XCTAssertTrue(listener.allows(IPAddress("::1")!))
        XCTAssertTrue(listener.allows(IPAddress("::ffff:127.0.0.1")!))
        XCTAssertFalse(listener.allows(IPAddress("10.0.0.1")!))
    }

    func testListenAddresses() throws {
        XCTAssertEqual(try ListenAddress(parsing: "127.0.0.1:3128"), ListenAddress(host: "127.0.0.1", port: 3128))
        XCTAssertEqual(try ListenAddress(parsing: "[::1]:3128"), ListenAddress(host: "::1", port: 3128))
        XCTAssertEqual(try ListenAddress(parsing: "0.0.0.0:3129").isWildcard, true)
        XCTAssertEqual(try ListenAddress(parsing: "[::]:3129").isWildcard, true)
        XCTAssertEqual(try ListenAddress(parsing: "localhost:8080"), ListenAddress(host: "localhost", port: 8080))
        XCTAssertEqual(try ListenAddress(parsing: "[::1]:3128").description, "[::1]:3128")
        for bad in ["localhost", "[::1]", "::1:80", "host:-1", "[10.0.0.1]:80", "bad host:80", ":80"] {
            XCTAssertThrowsError(try ListenAddress(parsing: bad), bad)
        }
    }

    func testEndpointURLs() throws {
        XCTAssertEqual(try EndpointURL(parsing: "https://api.example.com"),
                       EndpointURL(scheme: "https", host: "api.example.com", port: 443, path: "/"))
        XCTAssertEqual(try EndpointURL(parsing: "http://Proxy.Corp:8080"),
                       EndpointURL(scheme: "http", host: "proxy.corp", port: 8080, path: "/"))
        XCTAssertEqual(try EndpointURL(parsing: "HTTPS://[::1]:8443/oauth/token?x=1"),
                       EndpointURL(scheme: "https", host: "::1", port: 8443, path: "/oauth/token?x=1"))
        XCTAssertEqual(try EndpointURL(parsing: "http://10.0.0.1").port, 80)
        XCTAssertEqual(try EndpointURL(parsing: "https://[::1]:8443/t").authority, "[::1]:8443")
        XCTAssertEqual(try EndpointURL(parsing: "https://api.example.com:443").description, "https://api.example.com/")
        XCTAssertThrowsError(try EndpointURL(parsing: "https://user:pw@api.example.com")) { error in
            XCTAssertTrue("\(error)".contains("credentials belong in `credentials`"))
            XCTAssertFalse("\(error)".contains("pw@"))
        }
        for bad in ["api.example.com", "ws://x", "https://", "https://::1/", "https://x:0", "https://x/#frag"] {
            XCTAssertThrowsError(try EndpointURL(parsing: bad), bad)
        }
    }

    func testDurations() throws {
        XCTAssertEqual(try DurationParser.seconds(from: "500ms"), 0.5)
        XCTAssertEqual(try DurationParser.seconds(from: "10s"), 10)
        XCTAssertEqual(try DurationParser.seconds(from: "10m"), 600)
        XCTAssertEqual(try DurationParser.seconds(from: "1h"), 3600)
        XCTAssertEqual(try DurationParser.seconds(from: "1.5s"), 1.5)
        XCTAssertEqual(try DurationParser.seconds(from: "30"), 30)
        for bad in ["", "s", "10x", "-5s", "1h30m", "ten s", "10 minutes"] {
            XCTAssertThrowsError(try DurationParser.seconds(from: bad), bad)
        }
    }

    func testKeyPathsQuoteNonIdentifiers() {
        let path = KeyPath.root.appending("hosts").appending("api.example.com").appending("trust").appending("pins").appending(0)
        XCTAssertEqual(path.description, #"hosts."api.example.com".trust.pins[0]"#)
        XCTAssertEqual(KeyPath.root.appending("credentials").appending("svc_2").description, "credentials.svc_2")
        XCTAssertEqual(KeyPath.root.appending("x").appending("say \"hi\"").description, #"x."say \"hi\"""#)
    }

    func testNearMissSuggestions() {
        XCTAssertEqual(NearMiss.suggestion(for: "listn", among: ["listen", "admin"]), "listen")
        XCTAssertEqual(NearMiss.suggestion(for: "allowInvalidCertificates", among: ["allow_invalid_certificates"]), "allow_invalid_certificates")
        XCTAssertNil(NearMiss.suggestion(for: "colour", among: ["level", "format", "access"]))
    }
}
