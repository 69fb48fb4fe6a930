import XCTest
import COpenSSL
@testable import CountersignTrust

/// Real TLS handshakes of `UpstreamTLSContext` against `openssl s_server`, then `evaluate`.
final class UpstreamHandshakeTests: XCTestCase {
    let fixture = PKIFixture.shared
    var servers: [OpenSSLServer] = []

    override func tearDown() {
        servers.forEach { $0.stop() }
        servers = []
    }

    func server(_ name: String, _ extra: [String] = []) throws -> OpenSSLServer {
        let server = try OpenSSLServer(arguments: ["-cert", fixture.path("\(name).pem"), "-key", fixture.path("\(name).key"),
                                                   "-cert_chain", fixture.path("intermediate.pem"), "-www"] + extra)
        servers.append(server)
        return server
    }

    func anchorsContext(_ settings: TrustSettings = TrustSettings(), identity: ClientIdentity? = nil) throws -> UpstreamTLSContext {
        var settings = settings
        settings.anchors = [fixture.path("root.pem")]
        return try UpstreamTLSContext(policy: try TrustPolicy.load(settings), identity: identity)
    }

    func get(_ client: BlockingTLSClient) -> String {
        XCTAssertTrue(client.write(Array("GET / HTTP/1.0\r\n\r\n".utf8)))
        return String(decoding: client.read(), as: UTF8.self)
    }

    func testTrustedHandshakeAndTheServedLeaf() throws {
        let server = try server("leaf")
        let context = try anchorsContext()
        let client = try BlockingTLSClient(host: "127.0.0.1", port: server.port, context: context, serverName: "localhost")
        defer { client.close() }
        XCTAssertEqual(context.evaluate(ssl: client.ssl), .trusted)
        XCTAssertEqual(context.servedLeaf(ssl: client.ssl), try fixture.certificate("leaf.pem"))
        XCTAssertEqual(context.servedCertificates(ssl: client.ssl).count, 2)
        XCTAssertEqual(client.protocolVersion, "TLSv1.3")
        XCTAssertTrue(get(client).hasPrefix("HTTP/1.0 200 ok"))
    }

    func testIPLiteralIsValidatedAgainstIPAddressEntries() throws {
        let server = try server("leaf")
        let context = try anchorsContext()
        let client = try BlockingTLSClient(host: "127.0.0.1", port: server.port, context: context)
        defer { client.close() }
        XCTAssertEqual(context.evaluate(ssl: client.ssl), .trusted)
    }

    func connect(_ server: OpenSSLServer, _ context: UpstreamTLSContext) throws -> BlockingTLSClient {
        try BlockingTLSClient(host: "127.0.0.1", port: server.port, context: context, serverName: "localhost")
    }

    /// The refusal a handshake ended with: the verify callback's sentence, not OpenSSL's.
    func refusal(_ server: OpenSSLServer, _ context: UpstreamTLSContext, file: StaticString = #filePath,
                 line: UInt = #line) -> String {
        do {
            let client = try connect(server, context)
            client.close()
            XCTFail("the handshake completed", file: file, line: line)
            return ""
        } catch {
            return "\(error)"
        }
    }

    func testRefusalsEndTheHandshakeWithTheReason() throws {
        let expired = try server("expired")
        XCTAssertTrue(refusal(expired, try anchorsContext()).hasSuffix("failed: certificate expired on 2024-01-01T00:00:00Z"))

        let good = try server("leaf")
        let evilPin = try fixture.certificate("evil-root.pem").spkiSHA256
        let pinned = try anchorsContext(TrustSettings(pinning: .publicKey, pins: [evilPin]))
        let details = refusal(good, pinned)
        XCTAssertTrue(details.contains("pin mismatch"), details)
        XCTAssertTrue(details.contains(PublicKeyPin(of: try fixture.certificate("leaf.pem")).description), details)
        XCTAssertTrue(details.hasSuffix("configured \(try PublicKeyPin(sha256: evilPin))"), details)
        XCTAssertEqual(pinned.cachedSessionCount, 0, "a refused server left a session to resume")
    }

    func testAPinnedCertificateAppendedToTheServedChainIsRefused() throws {
        // A self-signed leaf followed by the genuine, pinned leaf: the genuine leaf did not sign it.
        let appended = try OpenSSLServer(arguments: ["-cert", fixture.path("self-signed.pem"), "-key", fixture.path("self-signed.key"),
                                                     "-cert_chain", fixture.path("leaf.pem"), "-www"])
        servers.append(appended)
        let leafPin = try fixture.certificate("leaf.pem").spkiSHA256
        let allowInvalid = try UpstreamTLSContext(policy: try TrustPolicy.load(
            TrustSettings(pinning: .publicKey, pins: [leafPin], allowInvalidCertificates: true)))
        let details = refusal(appended, allowInvalid)
        XCTAssertTrue(details.contains("pin mismatch: verified path pins \(PublicKeyPin(of: try fixture.certificate("self-signed.pem")));"),
                      details)
        XCTAssertTrue(details.hasSuffix("not on the verified path, so not considered: \(try PublicKeyPin(sha256: leafPin))"), details)

        // The same pin on a real chain the leaf heads is accepted.
        let genuine = try server("leaf")
        let client = try connect(genuine, allowInvalid)
        defer { client.close() }
        XCTAssertEqual(allowInvalid.evaluate(ssl: client.ssl), .trusted)
    }

    func testAResumedSessionIsJudgedAgainOnItsStoredChain() throws {
        let server = try server("leaf")
        let context = try anchorsContext()
        let first = try connect(server, context)
        _ = get(first) // TLS 1.3 tickets arrive after the handshake
        first.close()
        XCTAssertEqual(context.cachedSessionCount, 1)
        let resumed = try connect(server, context)
        defer { resumed.close() }
        XCTAssertTrue(resumed.resumedSession)
        // No verify callback ran: the chain kept with the session is evaluated by the same
        // function, here at a time when the leaf has expired, and the session is dropped.
        let later = try fixture.certificate("leaf.pem").notAfter + 86400
        XCTAssertEqual(context.evaluate(ssl: resumed.ssl, at: later).refusal?.kind, .expired)
        XCTAssertEqual(context.cachedSessionCount, 0)
    }

    func testNewConnectionsResumeTheCachedSession() throws {
        let server = try server("leaf")
        let context = try anchorsContext()
        let first = try BlockingTLSClient(host: "127.0.0.1", port: server.port, context: context, serverName: "localhost")
        XCTAssertFalse(first.resumedSession)
        _ = get(first) // TLS 1.3 tickets arrive after the handshake
        first.close()
        XCTAssertEqual(context.cachedSessionCount, 1)

        let second = try BlockingTLSClient(host: "127.0.0.1", port: server.port, context: context, serverName: "localhost")
        defer { second.close() }
        XCTAssertTrue(second.resumedSession)
        XCTAssertEqual(context.evaluate(ssl: second.ssl), .trusted, "a resumed session still carries the served chain")
    }

    func testClientCertificateIsPresentedWhenAsked() throws {
        let server = try server("leaf", ["-Verify", "1", "-CAfile", fixture.path("root.pem")])
        let identity = try ClientIdentity.load(pem: fixture.path("client-chain.pem"), keyPath: fixture.path("client.key"))
        let context = try anchorsContext(identity: identity)
        let client = try BlockingTLSClient(host: "127.0.0.1", port: server.port, context: context, serverName: "localhost")
        defer { client.close() }
        XCTAssertTrue(get(client).hasPrefix("HTTP/1.0 200 ok"))
    }

    func testMissingClientCertificateIsExplainedInTLS12() throws {
        let server = try server("leaf", ["-Verify", "1", "-CAfile", fixture.path("root.pem"), "-tls1_2"])
        XCTAssertThrowsError(try BlockingTLSClient(host: "127.0.0.1", port: server.port, context: try anchorsContext(),
                                                   serverName: "localhost")) { error in
            XCTAssertTrue("\(error)".contains("requires a client certificate"), "\(error)")
        }
    }

    func testMissingClientCertificateIsExplainedInTLS13() throws {
        let server = try server("leaf", ["-Verify", "1", "-CAfile", fixture.path("root.pem")])
        let context = try anchorsContext()
        let client = try BlockingTLSClient(host: "127.0.0.1", port: server.port, context: context, serverName: "localhost")
        defer { client.close() }
        // In TLS 1.3 the server's verdict arrives after the client's handshake completes: on first read.
        XCTAssertTrue(client.write(Array("GET / HTTP/1.0\r\n\r\n".utf8)))
        var byte: UInt8 = 0
        let result = SSL_read(client.ssl, &byte, 1)
        XCTAssertLessThanOrEqual(result, 0)
        XCTAssertEqual(context.handshakeFailure(ssl: client.ssl, result: result),
                       "the upstream requires a client certificate and none is configured (set identity for this host)")
    }

    func testProtocolVersionMismatchIsExplained() throws {
        let server = try server("leaf", ["-tls1_2"])
        let context = try anchorsContext(TrustSettings(minTLSVersion: .tls13))
        XCTAssertThrowsError(try BlockingTLSClient(host: "127.0.0.1", port: server.port, context: context,
                                                   serverName: "localhost")) { error in
            XCTAssertTrue("\(error)".contains("no shared protocol version"), "\(error)")
        }
    }

    func testPinCommandReportMatchesTheOpenSSLCommandLine() throws {
        let server = try server("leaf")
        let probe = ServedChainProbe(target: HostPort(host: "127.0.0.1", port: server.port), serverName: "localhost",
                                     anchorsPath: fixture.path("root.pem"))
        let result = try probe.run(policy: try probe.makePolicy())
        let text = PinReport(result: result, explicitServerName: "localhost", anchorsPath: fixture.path("root.pem")).text
        for name in ["leaf.pem", "intermediate.pem"] {
            let expected = Shell.pipeline("openssl x509 -in '\(fixture.path(name))' -pubkey -noout"
                + " | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64")
            XCTAssertTrue(text.contains("SPKI pin:    sha256//\(expected)"), text)
            XCTAssertTrue(text.contains("\"sha256//\(expected)\","), text)
        }
        XCTAssertTrue(text.contains("Chain: validates against the configured anchors"), text)
        XCTAssertTrue(text.contains("Name:  certificate matches localhost"), text)
        XCTAssertTrue(text.contains("\"127.0.0.1:\(server.port)\": {"), text)
        XCTAssertTrue(text.contains("server_name: \"localhost\","), text)
        XCTAssertTrue(text.contains("not after:   2024") == false)
    }

    func testPinCommandNeverOffersAnAppendedCertificateAsAPin() throws {
        let appended = try OpenSSLServer(arguments: ["-cert", fixture.path("self-signed.pem"), "-key", fixture.path("self-signed.key"),
                                                     "-cert_chain", fixture.path("leaf.pem"), "-www"])
        servers.append(appended)
        let probe = ServedChainProbe(target: HostPort(host: "127.0.0.1", port: appended.port), serverName: "localhost",
                                     anchorsPath: fixture.path("root.pem"))
        let report = PinReport(result: try probe.run(policy: try probe.makePolicy()), explicitServerName: nil,
                               anchorsPath: fixture.path("root.pem"))
        let leafPin = PublicKeyPin(of: try fixture.certificate("leaf.pem")).description
        let selfSignedPin = PublicKeyPin(of: try fixture.certificate("self-signed.pem")).description
        XCTAssertTrue(report.snippet.contains(selfSignedPin), report.snippet)
        XCTAssertFalse(report.snippet.contains(leafPin), "the appended leaf is offered as a pin:\n\(report.snippet)")
        XCTAssertTrue(report.text.contains("SPKI pin:    \(leafPin)\n    SHA-256:"), report.text)
        XCTAssertTrue(report.text.contains("note:        not on the verified path: a pin of it would never match"), report.text)
    }

    func testPinCommandExitCodes() throws {
        XCTAssertEqual(PinCommand.run(arguments: [], anchorsBase: .workingDirectory("/")), 2)
        XCTAssertEqual(PinCommand.run(arguments: ["example.com", "--bogus"], anchorsBase: .workingDirectory("/")), 2)
        XCTAssertEqual(PinCommand.run(arguments: ["example.com:notaport"], anchorsBase: .workingDirectory("/")), 2)
        XCTAssertEqual(PinCommand.run(arguments: ["example.com", "--anchors", fixture.path("missing.pem")], anchorsBase: .workingDirectory("/")), 2)
        XCTAssertEqual(PinCommand.run(arguments: ["--help"], anchorsBase: .workingDirectory("/")), 0)
        XCTAssertEqual(PinCommand.run(arguments: ["127.0.0.1:1"], anchorsBase: .workingDirectory("/")), 1)
        let server = try server("wrong-name")
        XCTAssertEqual(PinCommand.run(arguments: ["127.0.0.1:\(server.port)", "--anchors", fixture.path("root.pem")], anchorsBase: .workingDirectory("/")), 0)
    }

    func testHostPortParsing() throws {
        XCTAssertEqual(try HostPort(parsing: "api.example.com"), HostPort(host: "api.example.com", port: 443))
        XCTAssertEqual(try HostPort(parsing: "api.example.com:8443"), HostPort(host: "api.example.com", port: 8443))
        XCTAssertEqual(try HostPort(parsing: "[::1]:8443"), HostPort(host: "::1", port: 8443))
        XCTAssertEqual(try HostPort(parsing: "::1"), HostPort(host: "::1", port: 443))
        XCTAssertEqual(HostPort(host: "::1", port: 8443).configKey, "[::1]:8443")
        XCTAssertEqual(HostPort(host: "api.example.com", port: 443).configKey, "api.example.com")
        XCTAssertThrowsError(try HostPort(parsing: "host:0"))
        XCTAssertThrowsError(try HostPort(parsing: ":443"))
    }
}
