import XCTest
@testable import CountersignHTTP

/// Where a request is going, as the proxy reads it from the request target.
final class RequestTargetTests: XCTestCase {
    // MARK: - Absolute form

    func testAbsoluteFormWithDefaultPort() throws {
        XCTAssertEqual(try RequestTarget.parse("http://example.com/a/b?c=d", method: "GET"),
                       .absolute(scheme: .http, authority: Authority(host: "example.com", port: 80), path: "/a/b?c=d"))
        XCTAssertEqual(try RequestTarget.parse("https://example.com/", method: "GET"),
                       .absolute(scheme: .https, authority: Authority(host: "example.com", port: 443), path: "/"))
    }

    func testAbsoluteFormWithExplicitPortAndEmptyPath() throws {
        XCTAssertEqual(try RequestTarget.parse("http://example.com:8080", method: "GET"),
                       .absolute(scheme: .http, authority: Authority(host: "example.com", port: 8080), path: "/"))
        XCTAssertEqual(try RequestTarget.parse("http://example.com?q=1", method: "GET"),
                       .absolute(scheme: .http, authority: Authority(host: "example.com", port: 80), path: "/?q=1"))
        XCTAssertEqual(try RequestTarget.parse("http://example.com:65535/", method: "GET"),
                       .absolute(scheme: .http, authority: Authority(host: "example.com", port: 65535), path: "/"))
    }

    func testSchemeAndHostAreNormalisedButThePathIsNot() throws {
        XCTAssertEqual(try RequestTarget.parse("HTTP://Example.COM:81/Mixed/Case?Q=V", method: "GET"),
                       .absolute(scheme: .http, authority: Authority(host: "example.com", port: 81), path: "/Mixed/Case?Q=V"))
    }

    func testIPv6LiteralInAbsoluteForm() throws {
        XCTAssertEqual(try RequestTarget.parse("http://[::1]:8080/x", method: "GET"),
                       .absolute(scheme: .http, authority: Authority(host: "::1", port: 8080), path: "/x"))
        XCTAssertEqual(try RequestTarget.parse("http://[2001:DB8::A]/", method: "GET"),
                       .absolute(scheme: .http, authority: Authority(host: "2001:db8::a", port: 80), path: "/"))
    }

    func testUserinfoIsRefused() {
        assertRefusal(.badTarget, try RequestTarget.parse("http://user:pass@example.com/", method: "GET"))
        assertRefusal(.badTarget, try RequestTarget.parse("http://@example.com/", method: "GET"))
    }

    func testBadPortsAreRefused() {
        for target in ["http://example.com:0/", "http://example.com:65536/", "http://example.com:/",
                       "http://example.com:8o/", "http://example.com:-1/", "http://example.com:+80/",
                       "http://example.com:000080/", "http://[::1]:99999/"] {
            assertRefusal(.badTarget, try RequestTarget.parse(target, method: "GET"))
        }
    }

    func testEmptyHostIsRefused() {
        for target in ["http:///path", "http://", "http://:80/", "http://[]:80/"] {
            assertRefusal(.badTarget, try RequestTarget.parse(target, method: "GET"))
        }
    }

    func testUnsupportedSchemesAreRefused() {
        for target in ["ftp://example.com/", "file:///etc/passwd", "ws://example.com/", "gopher://example.com:70/"] {
            assertRefusal(.badTarget, try RequestTarget.parse(target, method: "GET"))
        }
    }

    func testTheSchemeIsMatchedInAnyCaseAndOnlyWhole() throws {
        XCTAssertEqual(try RequestTarget.parse("HtTpS://h/", method: "GET"),
                       .absolute(scheme: .https, authority: Authority(host: "h", port: 443), path: "/"))
        for target in ["httpx://h/", "htt://h/", "httpss://h/", "hxxp://h/", "http s://h/"] {
            assertRefusal(.badTarget, try RequestTarget.parse(target, method: "GET"))
        }
    }

    /// The client reads the detail in the 400's body: each bad authority is named for the first
    /// check it fails, in the order host, then port.
    func testABadAuthorityIsNamedForItsFirstFault() {
        for (target, method, detail) in [
            ("http://a@b:8o/", "GET", "userinfo in the request target is not allowed"),
            ("http://exa<mple:8o/", "GET", "invalid host name"),
            ("http://exa<mple:80/", "GET", "invalid host name"),
            ("http://example:8o/", "GET", "invalid port"),
            ("http://example:123456/", "GET", "invalid port"),
            ("http://example:0/", "GET", "invalid port"),
            ("http://:80/", "GET", "invalid host name"),
            ("exa<mple", "CONNECT", "invalid host name"),
            ("example", "CONNECT", "a port is required"),
            ("[::1]", "CONNECT", "a port is required"),
            ("[::1]:0", "CONNECT", "invalid port"),
        ] {
            XCTAssertThrowsError(try RequestTarget.parse(target, method: method), target) { error in
                XCTAssertEqual((error as? HTTPParseError)?.detail, detail, target)
            }
        }
    }

    func testFragmentDirectlyAfterTheAuthorityIsRefused() {
        assertRefusal(.badTarget, try RequestTarget.parse("http://example.com#frag", method: "GET"))
    }

    func testFragmentAfterAPathIsRefused() {
        // absolute-URI (RFC 3986 §4.3) has no fragment, wherever it appears.
        assertRefusal(.badTarget, try RequestTarget.parse("http://example.com/page#frag", method: "GET"))
        assertRefusal(.badTarget, try RequestTarget.parse("http://example.com/page?q=1#frag", method: "GET"))
    }

    func testInvalidHostCharactersAreRefused() {
        for target in ["http://exa<mple.com/", "http://example.com]/", "http://[::1/", "http://[::1]x/",
                       "http://[not-ipv6]/", "http://exa\"mple/"] {
            assertRefusal(.badTarget, try RequestTarget.parse(target, method: "GET"))
        }
    }

    func testTargetThatIsNeitherAPathNorAnAbsoluteURIIsRefused() {
        for target in ["example.com/", "http:example.com", "*/x", "mailto:a@b"] {
            assertRefusal(.badTarget, try RequestTarget.parse(target, method: "GET"))
        }
    }

    // MARK: - Origin and asterisk form

    func testOriginForm() throws {
        XCTAssertEqual(try RequestTarget.parse("/index.html?x=1", method: "GET"), .origin(path: "/index.html?x=1"))
    }

    func testFragmentInOriginFormIsRefused() {
        // origin-form is absolute-path [ "?" query ] (RFC 9112 §3.2.1): no fragment.
        assertRefusal(.badTarget, try RequestTarget.parse("/page#frag", method: "GET"))
    }

    func testAsteriskFormOnlyForOptions() throws {
        XCTAssertEqual(try RequestTarget.parse("*", method: "OPTIONS"), .asterisk)
        assertRefusal(.badTarget, try RequestTarget.parse("*", method: "GET"))
    }

    // MARK: - CONNECT

    func testConnectToHostAndPort() throws {
        XCTAssertEqual(try RequestTarget.parse("Example.COM:443", method: "CONNECT"),
                       .authority(Authority(host: "example.com", port: 443)))
        XCTAssertEqual(try RequestTarget.parse("db.internal:5432", method: "CONNECT"),
                       .authority(Authority(host: "db.internal", port: 5432)))
    }

    func testConnectToIPv6Literal() throws {
        let target = try RequestTarget.parse("[::1]:8443", method: "CONNECT")
        XCTAssertEqual(target, .authority(Authority(host: "::1", port: 8443)))
        guard case .authority(let authority) = target else { return }
        XCTAssertTrue(authority.isIPv6Literal)
        XCTAssertEqual(authority.description, "[::1]:8443")
    }

    func testConnectWithoutPortIsRefused() {
        assertRefusal(.badTarget, try RequestTarget.parse("example.com", method: "CONNECT"))
        assertRefusal(.badTarget, try RequestTarget.parse("[::1]", method: "CONNECT"))
        assertRefusal(.badTarget, try RequestTarget.parse("example.com:", method: "CONNECT"))
    }

    func testConnectWithOtherFormsIsRefused() {
        for target in ["/path", "http://example.com:443", "example.com:443/path", "user@example.com:443",
                       "::1:443", "example.com:0"] {
            assertRefusal(.badTarget, try RequestTarget.parse(target, method: "CONNECT"))
        }
    }

    // MARK: - Authority presentation

    func testHostFieldLeavesOutTheDefaultPortAndBracketsIPv6() {
        XCTAssertEqual(Authority(host: "example.com", port: 80).hostField(defaultPort: 80), "example.com")
        XCTAssertEqual(Authority(host: "example.com", port: 8080).hostField(defaultPort: 80), "example.com:8080")
        XCTAssertEqual(Authority(host: "::1", port: 443).hostField(defaultPort: 443), "[::1]")
        XCTAssertEqual(Authority(host: "::1", port: 8443).hostField(defaultPort: 443), "[::1]:8443")
        for port: UInt16 in [1, 9, 10, 99, 100, 8080, 10000, 65535] {
            XCTAssertEqual(Authority(host: "h", port: port).hostField(defaultPort: 80), "h:\(port)")
            XCTAssertEqual(Authority(host: "::1", port: port).description, "[::1]:\(port)")
        }
        XCTAssertEqual(Authority(host: "example.com", port: 80).description, "example.com:80")
        XCTAssertEqual(Authority(host: "10.0.0.1", port: 3128).description, "10.0.0.1:3128")
    }

    func testIPLiteralRecognition() {
        XCTAssertTrue(IPLiteral.isIPv4("192.168.0.1"))
        XCTAssertFalse(IPLiteral.isIPv4("256.1.1.1"))
        XCTAssertFalse(IPLiteral.isIPv4("1.2.3"))
        XCTAssertFalse(IPLiteral.isIPv4("1..2.3"))
        XCTAssertTrue(IPLiteral.isIPv6("::ffff:10.0.0.1"))
        XCTAssertTrue(IPLiteral.isIPv6("FE80::1"))
        XCTAssertFalse(IPLiteral.isIPv6("example.com"))
        XCTAssertFalse(IPLiteral.isIPv6("fe80::1%eth0"))
    }
}
