import XCTest
@testable import CountersignHTTP

/// The heads the proxy writes, as bytes, for each rewrite it makes.
final class ForwardedHeadsTests: XCTestCase {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    private func head(_ method: String = "POST", version: HTTPVersion = .http11, _ fields: [(String, String)]) -> RequestHead {
        RequestHead(method: method, target: "http://o/x", version: version, headers: HeaderFields(fields.map { HeaderField($0.0, $0.1) }))
    }

    func testRequestGetsHostViaAndAnswerAndLosesHopByHop() {
        let out = text(ForwardedHeads.request(head("GET", [("Host", "evil"), ("Connection", "keep-alive"), ("Authorization", "old")]),
                                              framing: .none, target: "/x", hostField: "o:8080",
                                              answers: [(.authorization, Array("Basic YTpi".utf8))], handshakeLeg: false, ownExpect: false))
        XCTAssertEqual(out, "GET /x HTTP/1.1\r\nHost: o:8080\r\nAuthorization: Basic YTpi\r\nVia: 1.1 countersign\r\n\r\n")
    }

    func testHandshakeLegAnnouncesNoBody() {
        let out = text(ForwardedHeads.request(head("POST", [("Transfer-Encoding", "chunked"), ("Expect", "100-continue")]),
                                              framing: .chunked, target: "/x", hostField: "o",
                                              answers: [(.authorization, Array("NTLM TlRMTVNTUAAB".utf8))], handshakeLeg: true, ownExpect: true))
        XCTAssertFalse(out.contains("Transfer-Encoding"))
        XCTAssertFalse(out.contains("Expect"))
        XCTAssertTrue(out.contains("Content-Length: 0\r\n"))
    }

    func testOwnExpectIsAddedAndChunkedListNormalised() {
        let out = text(ForwardedHeads.request(head("POST", [("Transfer-Encoding", ", chunked")]), framing: .chunked, target: "/x", hostField: "o",
                                              answers: [], handshakeLeg: false, ownExpect: true))
        XCTAssertTrue(out.contains("Transfer-Encoding: chunked\r\n"))
        XCTAssertTrue(out.contains("Expect: 100-continue\r\n"))
    }

    func testViaNamesTheVersionTheMessageWasReceivedIn() {
        // An HTTP/2 stream's request and an HTTP/2 upstream's response, each translated to HTTP/1.1.
        let request = text(ForwardedHeads.request(head("GET", []), framing: .none, target: "/", hostField: "o",
                                                  answers: [], handshakeLeg: false, ownExpect: false, receivedIn: .http2))
        XCTAssertTrue(request.contains("Via: 2 countersign\r\n"), request)
        let (bytes, _) = ForwardedHeads.response(ResponseHead(status: 200, reason: "OK"), framing: .contentLength(0), clientVersion: .http11,
                                                 clientKeepAlive: true, receivedIn: .http2)
        XCTAssertTrue(text(bytes).contains("Via: 2 countersign\r\n"), text(bytes))
    }

    func testHTTP10RequestSaysVia10() {
        let out = text(ForwardedHeads.request(head("GET", version: .http10, []), framing: .none, target: "/", hostField: "o",
                                              answers: [], handshakeLeg: false, ownExpect: false))
        XCTAssertTrue(out.contains("Via: 1.0 countersign\r\n"))
    }

    func testRequestedUpgradeIsKept() {
        let out = text(ForwardedHeads.request(head("GET", [("Connection", "Upgrade"), ("Upgrade", "websocket")]), framing: .none,
                                              target: "/", hostField: "o", answers: [], handshakeLeg: false, ownExpect: false))
        XCTAssertTrue(out.contains("Upgrade: websocket\r\n"))
    }

    func testChunkedResponseToHTTP10ClientGoesRawAndCloses() {
        let response = ResponseHead(status: 200, reason: "OK", headers: HeaderFields([HeaderField("Transfer-Encoding", "chunked")]))
        let (bytes, raw) = ForwardedHeads.response(response, framing: .chunked, clientVersion: .http10, clientKeepAlive: false)
        XCTAssertTrue(raw)
        XCTAssertEqual(text(bytes), "HTTP/1.1 200 OK\r\nVia: 1.1 countersign\r\nConnection: close\r\n\r\n")
    }

    func testKeepAliveToHTTP10ClientIsAnnounced() {
        let response = ResponseHead(status: 200, reason: "OK", headers: HeaderFields([HeaderField("Content-Length", "0"), HeaderField("Keep-Alive", "timeout=5")]))
        let (bytes, raw) = ForwardedHeads.response(response, framing: .contentLength(0), clientVersion: .http10, clientKeepAlive: true)
        XCTAssertFalse(raw)
        XCTAssertEqual(text(bytes), "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nVia: 1.1 countersign\r\nConnection: keep-alive\r\n\r\n")
    }

    /// `keep-alive` and `upgrade` in `Connection`, in any case, name no field to drop; an element
    /// one letter off does, and the field it names goes.
    func testConnectionNamesAFieldUnlessItIsKeepAliveOrUpgrade() {
        func forwarded(_ connection: String) -> String {
            let response = ResponseHead(status: 200, reason: "OK", headers: HeaderFields([
                HeaderField("Connection", connection), HeaderField("keep-alivd", "1"), HeaderField("Upgradf", "2"),
                HeaderField("X-A", "3"),
            ]))
            return text(ForwardedHeads.response(response, framing: .contentLength(0), clientVersion: .http11, clientKeepAlive: true).head)
        }
        let kept = "HTTP/1.1 200 OK\r\nkeep-alivd: 1\r\nUpgradf: 2\r\nX-A: 3\r\nVia: 1.1 countersign\r\n\r\n"
        XCTAssertEqual(forwarded("Keep-Alive"), kept)
        XCTAssertEqual(forwarded("KEEP-ALIVE, UpGrade"), kept)
        XCTAssertEqual(forwarded(" upgrade ,keep-alive"), kept)
        XCTAssertEqual(forwarded("keep-alivd"), "HTTP/1.1 200 OK\r\nUpgradf: 2\r\nX-A: 3\r\nVia: 1.1 countersign\r\n\r\n")
        XCTAssertEqual(forwarded("keep-alive, UPGRADF, x-a"), "HTTP/1.1 200 OK\r\nkeep-alivd: 1\r\nVia: 1.1 countersign\r\n\r\n")
    }

    func testInterimLosesHopByHopAndSwitchingKeepsUpgrade() {
        let interim = ResponseHead(status: 103, reason: "Early Hints", headers: HeaderFields([HeaderField("Link", "</a>"), HeaderField("Connection", "x")]))
        XCTAssertEqual(text(ForwardedHeads.interim(interim)), "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n")
        let switching = ResponseHead(status: 101, reason: "Switching Protocols",
                                     headers: HeaderFields([HeaderField("Connection", "Upgrade"), HeaderField("Upgrade", "websocket")]))
        XCTAssertTrue(text(ForwardedHeads.switching(switching)).contains("Upgrade: websocket\r\n"))
    }

    /// A head is written into memory of its `byteBound`; appended to an array, it follows what
    /// the array held, byte for byte the head written alone.
    func testAHeadAppendedToAnArrayFollowsWhatItHeld() {
        let request = head("GET", [("Host", "evil"), ("Accept", "*/*")])
        let forwarded = ForwardedHeads.requestHead(request, framing: .none, target: "/x", hostField: "o", answers: [],
                                                   handshakeLeg: false, ownExpect: false)
        var buffer = Array("kept".utf8)
        buffer.appendHead(bound: forwarded.byteBound) { forwarded.write(to: &$0) }
        XCTAssertEqual(text(buffer), "kept" + "GET /x HTTP/1.1\r\nHost: o\r\nAccept: */*\r\nVia: 1.1 countersign\r\n\r\n")

        let response = ResponseHead(status: 200, reason: "OK", headers: HeaderFields([HeaderField("Transfer-Encoding", "chunked")]))
        let (written, raw) = ForwardedHeads.responseHead(response, framing: .chunked, clientVersion: .http10, clientKeepAlive: false)
        XCTAssertEqual(text(written.bytes), "HTTP/1.1 200 OK\r\nVia: 1.1 countersign\r\nConnection: close\r\n\r\n")
        XCTAssertTrue(raw)
    }
}
