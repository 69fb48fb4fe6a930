import COpenSSL
import Foundation
import XCTest
@testable import CountersignInterception

/// Real clients (openssl s_client, curl) against `makeServerSSL`, trusting only the CA.
final class HandshakeTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var context: InterceptionTLSContext!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        let ca = try InterceptionCA.make(in: directory, hosts: ["api.example.com", "127.0.0.1"])
        context = try InterceptionTLSContext(minter: LeafMinter(ca: ca))
    }

    private func sClient(port: UInt16, _ options: [String]) throws -> OpenSSLTool.Outcome {
        try OpenSSLTool.run(["s_client", "-connect", "127.0.0.1:\(port)"] + options, input: "")
    }

    func testOpenSSLClientSeesTheMintedLeafIssuedByTheCAAndVerifiesIt() throws {
        let server = try LoopbackTLSServer(context: context, host: "api.example.com", connections: 1)
        let client = try sClient(port: server.port, ["-servername", "api.example.com", "-CAfile", directory.file("ca.pem"),
                                                     "-verify_return_error", "-verify_hostname", "api.example.com",
                                                     "-alpn", "h2,http/1.1"])
        XCTAssertEqual(client.status, 0, client.output)
        for expected in ["0 s:CN = api.example.com", "i:CN = Countersign interception CA (testhost)",
                         "1 s:CN = Countersign interception CA (testhost)",
                         "Verified peername: api.example.com", "Verify return code: 0 (ok)", "ALPN protocol: http/1.1"] {
            XCTAssertTrue(client.output.contains(expected), "missing \(expected) in\n\(client.output)")
        }
        XCTAssertEqual(server.handshakes(), [.succeeded(alpn: "http/1.1")])
    }

    func testAClientOfferingOnlyH2GetsNoALPNAndStillConnects() throws {
        let server = try LoopbackTLSServer(context: context, host: "api.example.com", connections: 1)
        let client = try sClient(port: server.port, ["-CAfile", directory.file("ca.pem"), "-verify_return_error", "-alpn", "h2"])
        XCTAssertEqual(client.status, 0, client.output)
        XCTAssertTrue(client.output.contains("No ALPN negotiated"), client.output)
        XCTAssertEqual(server.handshakes(), [.succeeded(alpn: nil)])
    }

    func testTheContextAllowsOnlyTLS12And13AndReleasesIdleBuffers() {
        let ssl = context.sslContext
        XCTAssertEqual(SSL_CTX_ctrl(ssl, SSL_CTRL_GET_MIN_PROTO_VERSION, 0, nil), Int(TLS1_2_VERSION))
        XCTAssertEqual(SSL_CTX_ctrl(ssl, SSL_CTRL_GET_MAX_PROTO_VERSION, 0, nil), Int(TLS1_3_VERSION))
        XCTAssertEqual(SSL_CTX_ctrl(ssl, SSL_CTRL_MODE, 0, nil) & Int(SSL_MODE_RELEASE_BUFFERS), Int(SSL_MODE_RELEASE_BUFFERS))
    }

    func testCurlTrustingOnlyTheCAGetsTheResponse() throws {
        let server = try LoopbackTLSServer(context: context, host: "api.example.com", connections: 1)
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["--silent", "--show-error", "--cacert", directory.file("ca.pem"), "--capath", "/nonexistent",
                          "--resolve", "api.example.com:\(server.port):127.0.0.1", "https://api.example.com:\(server.port)/"]
        let output = Pipe()
        curl.standardOutput = output
        curl.standardError = output
        try curl.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        curl.waitUntilExit()
        XCTAssertEqual(curl.terminationStatus, 0, text)
        XCTAssertEqual(text, "ok")
        XCTAssertEqual(server.handshakes(), [.succeeded(alpn: "http/1.1")])
    }

    func testAnIPLiteralHostVerifiesByAddress() throws {
        let server = try LoopbackTLSServer(context: context, host: "127.0.0.1", connections: 1)
        let client = try sClient(port: server.port, ["-CAfile", directory.file("ca.pem"), "-verify_return_error",
                                                     "-verify_ip", "127.0.0.1"])
        XCTAssertEqual(client.status, 0, client.output)
        XCTAssertEqual(server.handshakes(), [.succeeded(alpn: nil)])
    }

    func testAClientThatDoesNotTrustTheCAIsExplained() throws {
        let other = try TemporaryDirectory()
        _ = try InterceptionCA.make(in: other, hosts: nil)
        let server = try LoopbackTLSServer(context: context, host: "api.example.com", connections: 1)
        let client = try sClient(port: server.port, ["-servername", "api.example.com", "-CAfile", other.file("ca.pem"),
                                                     "-verify_return_error"])
        XCTAssertNotEqual(client.status, 0, client.output)
        let handshakes = try XCTUnwrap(server.handshakes())
        guard case .failed(let failure)? = handshakes.first else { return XCTFail("handshake did not fail: \(handshakes)") }
        XCTAssertEqual(failure.cause, .clientDoesNotTrustCA)
        XCTAssertEqual(failure.description,
                       "the client does not trust Countersign's CA for api.example.com; see `countersign ca show`")
    }

    /// The server keeps its sessions (no ticket sealing one per connection): a TLS 1.2 client
    /// resumes by the session ID it was given.
    func testATLS12ClientResumesByTheSessionIDTheServerKept() throws {
        let server = try LoopbackTLSServer(context: context, host: "api.example.com", connections: 2)
        let session = directory.file("session.pem")
        let common = ["-CAfile", directory.file("ca.pem"), "-tls1_2"]
        let first = try sClient(port: server.port, common + ["-sess_out", session])
        XCTAssertEqual(first.status, 0, first.output)
        XCTAssertFalse(first.output.contains("TLS session ticket lifetime hint"), "the server sealed the session in a ticket:\n\(first.output)")
        let second = try sClient(port: server.port, common + ["-sess_in", session])
        XCTAssertTrue(second.output.contains("Reused, TLSv1.2"), second.output)
        XCTAssertEqual(server.handshakes()?.count, 2)
    }
}
