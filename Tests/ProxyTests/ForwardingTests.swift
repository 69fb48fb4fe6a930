import XCTest

/// The proxy in-process between a raw-socket client and a recording upstream.
final class ForwardingTests: ProxyWithUpstreamTestCase {
    func testForwardsAbsoluteFormAsOriginFormWithViaAndHostFromTarget() throws {
        let client = try TestSocket.connect(port: proxy.port)
        client.send("GET http://127.0.0.1:\(upstream.port)/a?b=1 HTTP/1.1\r\nHost: wrong.example\r\nX-Custom-CASE: kept\r\n\r\n")
        let reply = client.read { $0.hasSuffix(self.upstream.body) }
        XCTAssertTrue(reply.hasPrefix("HTTP/1.1 200 OK\r\n"), reply)
        XCTAssertTrue(reply.contains("Via: 1.1 countersign\r\n"), reply)
        let seen = upstream.receivedText
        XCTAssertTrue(seen.hasPrefix("GET /a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:\(upstream.port)\r\nX-Custom-CASE: kept\r\nVia: 1.1 countersign\r\n\r\n"), seen)
    }

    func testPipelinedRequestsAreAnsweredInOrderOverOneUpstreamConnection() throws {
        let client = try TestSocket.connect(port: proxy.port)
        let one = "GET http://127.0.0.1:\(upstream.port)/one HTTP/1.1\r\nHost: x\r\n\r\n"
        let two = "GET http://127.0.0.1:\(upstream.port)/two HTTP/1.1\r\nHost: x\r\n\r\n"
        client.send(one + two)
        let reply = client.read { $0.components(separatedBy: self.upstream.body).count == 3 }
        XCTAssertEqual(reply.components(separatedBy: "HTTP/1.1 200 OK").count, 3, reply)
        let seen = upstream.receivedText
        let first = try XCTUnwrap(seen.range(of: "GET /one "))
        let second = try XCTUnwrap(seen.range(of: "GET /two "))
        XCTAssertLessThan(first.lowerBound, second.lowerBound)
        XCTAssertEqual(upstream.connectionCount, 1)
    }

    /// The pool keeps idle connections per upstream and takes from the one asked last without
    /// a lookup: a client alternating between two upstreams must still reach each one, over
    /// that upstream's own kept connection.
    func testAClientAlternatingBetweenUpstreamsReachesEachOverItsOwnKeptConnection() throws {
        let other = try RecordingUpstream(body: "hello from the other upstream")
        let client = try TestSocket.connect(port: proxy.port)
        for (round, target) in [upstream!, other, upstream!, other, other, upstream!].enumerated() {
            client.send("GET http://127.0.0.1:\(target.port)/r\(round) HTTP/1.1\r\nHost: x\r\n\r\n")
            let reply = client.read { $0.hasSuffix(target.body) }
            XCTAssertTrue(reply.hasPrefix("HTTP/1.1 200 OK\r\n") && reply.hasSuffix(target.body), "round \(round): \(reply)")
            XCTAssertTrue(target.receivedText.contains("GET /r\(round) "), "round \(round) went elsewhere")
        }
        XCTAssertEqual(upstream.connectionCount, 1)
        XCTAssertEqual(other.connectionCount, 1)
    }

    func testSmugglingShapeIsRefusedAndNeverReachesUpstreamAndTheProxyKeepsServing() throws {
        let bad = try TestSocket.connect(port: proxy.port)
        bad.send("POST http://127.0.0.1:\(upstream.port)/x HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        let refusal = bad.readToClose()
        XCTAssertTrue(refusal.hasPrefix("HTTP/1.1 400 "), refusal)
        XCTAssertTrue(refusal.contains("Proxy-Status: countersign; error=http_request_error"), refusal)
        XCTAssertEqual(upstream.receivedText, "")

        let good = try TestSocket.connect(port: proxy.port)
        good.send("GET http://127.0.0.1:\(upstream.port)/ok HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertTrue(good.read { $0.hasSuffix(self.upstream.body) }.hasPrefix("HTTP/1.1 200 OK"))
    }

    func testConnectTunnelCarriesBytesBothWays() throws {
        let client = try TestSocket.connect(port: proxy.port)
        client.send("CONNECT 127.0.0.1:\(upstream.port) HTTP/1.1\r\nHost: 127.0.0.1:\(upstream.port)\r\n\r\n")
        let established = client.read { $0.hasSuffix("\r\n\r\n") }
        XCTAssertTrue(established.hasPrefix("HTTP/1.1 200 "), established)
        client.send("GET /inside HTTP/1.1\r\nHost: x\r\n\r\n")
        let reply = client.read { $0.hasSuffix(self.upstream.body) }
        XCTAssertTrue(reply.contains("X-Upstream: yes"), reply)
        XCTAssertFalse(reply.contains("Via:"), "a blind tunnel must not touch the bytes: \(reply)")
        XCTAssertEqual(upstream.receivedText, "GET /inside HTTP/1.1\r\nHost: x\r\n\r\n")
    }

    func testRefusedUpstreamGives502WithProxyStatus() throws {
        let client = try TestSocket.connect(port: proxy.port)
        client.send("GET http://127.0.0.1:1/ HTTP/1.1\r\nHost: x\r\n\r\n")
        let reply = client.read { $0.contains("\r\n\r\n") && $0.hasSuffix("\n") }
        XCTAssertTrue(reply.hasPrefix("HTTP/1.1 502 "), reply)
        XCTAssertTrue(reply.contains("error=connection_refused"), reply)
    }
}
