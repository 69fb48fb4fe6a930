import XCTest
@testable import CountersignHTTP

/// What the next hop receives after the proxy removes connection-specific fields
/// (RFC 9110 §7.6.1), and what it keeps exactly as sent.
final class HopByHopTests: XCTestCase {
    private func stripped(_ fields: [(String, String)], keepUpgrade: Bool = false) -> [HeaderField] {
        var headers = HeaderFields(fields.map { HeaderField($0.0, $0.1) })
        HopByHop.strip(&headers, keepUpgrade: keepUpgrade)
        return headers.fields
    }

    func testRemovesTheStandardHopByHopFieldsAndKeepsTheRestInOrder() {
        let result = stripped([
            ("Host", "example.com"), ("Connection", "keep-alive"), ("Proxy-Connection", "keep-alive"),
            ("Keep-Alive", "timeout=5"), ("TE", "trailers"), ("Trailer", "Checksum"), ("Upgrade", "h2c"),
            ("Proxy-Authorization", "Basic dXNlcjpwYXNz"), ("Accept", "*/*"), ("X-Custom-CASE", "1"),
        ])
        XCTAssertEqual(result, [HeaderField("Host", "example.com"), HeaderField("Accept", "*/*"), HeaderField("X-Custom-CASE", "1")])
    }

    func testMatchingIgnoresCase() {
        let result = stripped([("CONNECTION", "close"), ("proxy-connection", "close"), ("keep-alive", "max=3"),
                               ("te", "trailers"), ("PROXY-AUTHORIZATION", "Basic x"), ("Date", "today")])
        XCTAssertEqual(result, [HeaderField("Date", "today")])
    }

    func testRemovesTheFieldsTheConnectionHeaderNames() {
        let result = stripped([("Connection", "X-Session, x-trace"), ("Connection", "Cookie2"),
                               ("X-Session", "s"), ("X-Trace", "t"), ("Cookie2", "c"), ("X-Kept", "k")])
        XCTAssertEqual(result, [HeaderField("X-Kept", "k")])
    }

    func testConnectionCloseStillNominatesAFieldNamedClose() {
        // "Close" is a reserved field name (RFC 9110 §7.6.1): a field by that name is the option's.
        XCTAssertEqual(stripped([("Connection", "close"), ("Close", "x"), ("Date", "today")]), [HeaderField("Date", "today")])
        XCTAssertEqual(stripped([("Connection", "Keep-Alive"), ("Date", "today"), ("X-Upgrade", "no")]),
                       [HeaderField("Date", "today"), HeaderField("X-Upgrade", "no")])
    }

    func testResponseOnlyProxyFieldsAreRemoved() {
        let result = stripped([("Proxy-Authenticate", "Basic realm=\"up\""), ("Proxy-Authentication-Info", "x"), ("ETag", "\"1\"")])
        XCTAssertEqual(result, [HeaderField("ETag", "\"1\"")])
    }

    func testEndToEndAuthorizationIsKept() {
        XCTAssertEqual(stripped([("Authorization", "Bearer t")]), [HeaderField("Authorization", "Bearer t")])
    }

    func testKeepUpgradeLetsAWebSocketHandshakeThrough() {
        let fields = [("Host", "ws.example"), ("Connection", "keep-alive, Upgrade, X-Hop"), ("Upgrade", "websocket"),
                      ("X-Hop", "1"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Proxy-Authorization", "Basic x")]
        var headers = HeaderFields(fields.map { HeaderField($0.0, $0.1) })
        XCTAssertTrue(HopByHop.requestsUpgrade(headers))
        HopByHop.strip(&headers, keepUpgrade: true)
        XCTAssertEqual(headers.fields, [HeaderField("Host", "ws.example"), HeaderField("Upgrade", "websocket"),
                                        HeaderField("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
                                        HeaderField("Connection", "upgrade")])
    }

    func testUpgradeIsRemovedWhenNotUpgrading() {
        let result = stripped([("Connection", "Upgrade"), ("Upgrade", "websocket"), ("Host", "h")])
        XCTAssertEqual(result, [HeaderField("Host", "h")])
    }

    func testRequestsUpgradeNeedsBothFields() {
        XCTAssertFalse(HopByHop.requestsUpgrade(HeaderFields([HeaderField("Upgrade", "websocket")])))
        XCTAssertFalse(HopByHop.requestsUpgrade(HeaderFields([HeaderField("Connection", "upgrade")])))
        XCTAssertTrue(HopByHop.requestsUpgrade(HeaderFields([HeaderField("connection", "UPGRADE"), HeaderField("upgrade", "websocket")])))
    }

    func testConnectionCannotStripTheFramingOfTheMessageBeingForwarded() {
        // The proxy streams the body it framed from these fields; if the Connection header
        // could remove them, the next hop would read that body as a new message (smuggling).
        let lengthFramed = stripped([("Host", "h"), ("Content-Length", "5"), ("Connection", "Content-Length")])
        XCTAssertTrue(lengthFramed.contains(HeaderField("Content-Length", "5")), "got \(lengthFramed)")
        let chunkFramed = stripped([("Host", "h"), ("Transfer-Encoding", "chunked"), ("Connection", "transfer-encoding")])
        XCTAssertTrue(chunkFramed.contains(HeaderField("Transfer-Encoding", "chunked")), "got \(chunkFramed)")
    }

    func testARepeatedContentLengthReachesTheNextHopOnce() {
        // nginx and Apache answer 400 to "5, 5" and to two lines: the smuggling corpus found the
        // proxy accepting the repetition (RFC 9110 §8.6 allows it) and forwarding it as sent.
        XCTAssertEqual(stripped([("Content-Length", "5"), ("X-A", "a"), ("content-length", "5")]),
                       [HeaderField("Content-Length", "5"), HeaderField("X-A", "a")])
        XCTAssertEqual(stripped([("X-A", "a"), ("Content-Length", "5, 5")]),
                       [HeaderField("X-A", "a"), HeaderField("Content-Length", "5")])
        XCTAssertEqual(stripped([("Content-Length", "5 ,\t5"), ("Content-Length", "5")]), [HeaderField("Content-Length", "5")])
        XCTAssertEqual(stripped([("Content-Length", "42")]), [HeaderField("Content-Length", "42")], "a single value is left as sent")
    }

    func testFramingRoutingAndConnectionFieldsAreDroppedFromTrailers() {
        for name in ["Content-Length", "transfer-encoding", "Host", "Connection", "Trailer", "TE", "Proxy-Authorization"] {
            XCTAssertTrue(HopByHop.isDroppedFromTrailer(HeaderField(name, "x")), name)
        }
        for name in ["Checksum", "Server-Timing", "X-Content-Length"] {
            XCTAssertFalse(HopByHop.isDroppedFromTrailer(HeaderField(name, "x")), name)
        }
    }
}
