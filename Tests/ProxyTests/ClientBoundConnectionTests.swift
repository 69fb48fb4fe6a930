import XCTest

/// A client's own connection-bound authorization (`Authorization: NTLM` / `Negotiate`)
/// authenticates the upstream connection (IIS semantics), so that connection serves that client
/// connection only (SPEC "Proxy behaviour"). Counted as upstream connections at a recording origin.
final class ClientBoundConnectionTests: ProxyWithUpstreamTestCase {
    private func get(_ client: TestSocket, _ path: String, authorization: String? = nil) -> String {
        let field = authorization.map { "Authorization: \($0)\r\n" } ?? ""
        client.send("GET http://127.0.0.1:\(upstream.port)\(path) HTTP/1.1\r\nHost: x\r\n\(field)\r\n")
        return client.read { $0.hasSuffix(self.upstream.body) }
    }

    func testAnotherClientNeverGetsTheConnectionAClientAuthenticatedWithNTLM() throws {
        try assertBoundToItsClient(authorization: "NTLM TlRMTVNTUAABAAAA")
    }

    func testAnotherClientNeverGetsTheConnectionAClientAuthenticatedWithNegotiate() throws {
        try assertBoundToItsClient(authorization: "negotiate YIIGhgYGKwYBBQUC")
    }

    private func assertBoundToItsClient(authorization: String, line: UInt = #line) throws {
        let owner = try TestSocket.connect(port: proxy.port)
        XCTAssertTrue(get(owner, "/own", authorization: authorization).hasPrefix("HTTP/1.1 200 "), line: line)
        let other = try TestSocket.connect(port: proxy.port)
        XCTAssertTrue(get(other, "/other").hasPrefix("HTTP/1.1 200 "), line: line)
        XCTAssertEqual(upstream.connectionCount, 2, "the second client rode the first one's authenticated connection", line: line)

        // The owner's next requests, with or without the field, stay on its connection.
        XCTAssertTrue(get(owner, "/own-again").hasPrefix("HTTP/1.1 200 "), line: line)
        XCTAssertTrue(get(owner, "/own-third", authorization: authorization).hasPrefix("HTTP/1.1 200 "), line: line)
        XCTAssertEqual(upstream.connectionCount, 2, "the owner left its connection", line: line)
    }

    func testOtherAuthorizationSchemesStillShareThePool() throws {
        let first = try TestSocket.connect(port: proxy.port)
        XCTAssertTrue(get(first, "/a", authorization: "Basic dXNlcjpwYXNz").hasPrefix("HTTP/1.1 200 "))
        let second = try TestSocket.connect(port: proxy.port)
        XCTAssertTrue(get(second, "/b").hasPrefix("HTTP/1.1 200 "))
        XCTAssertEqual(upstream.connectionCount, 1, "Basic authenticates the request, not the connection")
    }
}
