import Foundation
import XCTest
@testable import CountersignAuth
import CountersignSupport

/// The Negotiate exchange in header form against a real KDC and acceptor: what the proxy sends
/// and how it treats the server's final token.
final class NegotiateHandshakeTests: KDCTestCase {
    private let binding = Array("tls-server-end-point:".utf8) + [UInt8](repeating: 0x11, count: 32)

    private func handshake() throws -> NegotiateHandshake {
        let credential = try GSSCredential(api: api, principal: "client@\(TestKDC.realm)", source: .keytab(path: kdc.keytab),
                                           cacheName: "test-\(UUID().uuidString)")
        return NegotiateHandshake(context: try GSSSecurityContext(api: api, credential: credential, service: "HTTP@localhost",
                                                                  channelBinding: binding))
    }

    /// What the service replies to an `Authorization: Negotiate <token>` value.
    private func serviceReply(to answer: String) throws -> [UInt8] {
        XCTAssertTrue(answer.hasPrefix("Negotiate "))
        let token = try XCTUnwrap(Base64.decode(String(answer.dropFirst("Negotiate ".count))))
        let service = try TestAcceptor(api: api, serviceKeytab: kdc.serviceKeytab, expectedBinding: binding)
        let (reply, complete) = try service.step(token)
        XCTAssertTrue(complete)
        return reply
    }

    func testTheServersFinalTokenOnTheSuccessResponseIsVerified() throws {
        let negotiate = try handshake()
        let reply = try serviceReply(to: try negotiate.start())
        try negotiate.verify(finalChallenges: ChallengeParser.parse(fieldValues: ["Negotiate " + Base64.encode(reply)]))
        XCTAssertEqual(negotiate.state, .verified)
    }

    func testAForgedFinalTokenIsRefused() throws {
        let negotiate = try handshake()
        var reply = try serviceReply(to: try negotiate.start())
        reply[reply.count - 3] ^= 0x01
        XCTAssertThrowsError(try negotiate.verify(finalChallenges: ChallengeParser.parse(fieldValues: ["Negotiate " + Base64.encode(reply)])))
        XCTAssertNotEqual(negotiate.state, .verified)
        XCTAssertThrowsError(try negotiate.verify(finalChallenges: [Challenge(scheme: "Negotiate", token68: "%%%")])) { error in
            XCTAssertTrue("\(error)".contains("not base64"), "\(error)")
        }
    }

    /// A reply from a server that does not hold the service key (a token replayed from another
    /// exchange) does not verify either.
    func testAFinalTokenFromAnotherExchangeIsRefused() throws {
        let first = try handshake()
        let otherReply = try serviceReply(to: try first.start())
        let second = try handshake()
        _ = try second.start()
        XCTAssertThrowsError(try second.verify(finalChallenges: [Challenge(scheme: "Negotiate", token68: Base64.encode(otherReply))]))
    }

    func testASuccessWithoutAFinalTokenIsTakenAsIs() throws {
        let negotiate = try handshake()
        _ = try negotiate.start()
        XCTAssertNoThrow(try negotiate.verify(finalChallenges: []))
        XCTAssertEqual(negotiate.state, .tokenSent)
    }

    func testTheServersTokenInAChallengeCompletesTheContext() throws {
        let negotiate = try handshake()
        let reply = try serviceReply(to: try negotiate.start())
        XCTAssertNil(try negotiate.answer(challengeToken: Base64.encode(reply)), "Kerberos needs no third leg")
        XCTAssertEqual(negotiate.state, .verified)
        XCTAssertThrowsError(try negotiate.start())
    }
}
