import Foundation
import XCTest
@testable import CountersignAuth

/// Negotiate in the answering machine against a real KDC and acceptor: the token carries the
/// channel binding it is given, the server's final token decides the outcome, and without a
/// ticket the same credential's NTLM identity answers, saying why.
final class NegotiateAnswererTests: KDCTestCase {
    private let target = AuthTarget(host: "localhost", port: 443)
    private let binding = TLSChannelBinding.applicationData(certificateHash: [UInt8](repeating: 0x5a, count: 32))

    private func answerer(alongside: CredentialMaterial? = nil, schemes: [AuthSchemeName] = [.negotiate]) -> ChallengeAnswerer {
        let loaded = api!
        let kerberos = KerberosCredential(principal: "client@\(TestKDC.realm)", source: .keytab(path: kdc.keytab),
                                          cacheName: "answerer-\(UUID().uuidString)", library: { .success(loaded) })
        return ChallengeAnswerer(rules: [AuthRule(credentialName: "krb", schemes: schemes)],
                                 credentials: ["krb": .kerberos(kerberos, alongside: alongside)], store: ProtectionSpaceStore())
    }

    private func request(binding: [UInt8]?) -> AuthRequest {
        var request = AuthRequest(method: "GET", target: "/", connectionIsTLS: binding != nil)
        request.gssChannelBinding = binding
        return request
    }

    private func challenge(_ value: String = "Negotiate") -> AuthResponseHead {
        AuthResponseHead(status: 401, fields: [(name: "WWW-Authenticate", value: value)])
    }

    private func token(of decision: ChallengeDecision) throws -> [UInt8] {
        guard case .answer(let answer) = decision else { throw XCTSkip("no answer: \(decision)") }
        XCTAssertTrue(answer.bindsConnection, "a Negotiate answer binds the connection")
        return try XCTUnwrap(Base64.decode(String(answer.value.dropFirst("Negotiate ".count))))
    }

    func testTheTokenCarriesTheChannelBindingAndTheFinalTokenIsVerified() throws {
        let answerer = answerer()
        var exchange = AuthExchange()
        let first = try token(of: answerer.respond(to: challenge(), request: request(binding: binding), target: target, exchange: &exchange))
        let service = try TestAcceptor(api: api, serviceKeytab: kdc.serviceKeytab, expectedBinding: binding)
        let (reply, complete) = try service.step(first)
        XCTAssertTrue(complete)
        let ok = AuthResponseHead(status: 200, fields: [(name: "WWW-Authenticate", value: "Negotiate " + Base64.encode(reply))])
        XCTAssertEqual(answerer.complete(response: ok, target: target, exchange: &exchange), .answered(.negotiate))
        XCTAssertNotNil(answerer.store.entry(for: ProtectionSpace(target: target, scheme: .negotiate, realm: nil)))
    }

    func testAnAcceptorExpectingAnotherBindingRefusesTheToken() throws {
        var exchange = AuthExchange()
        let first = try token(of: answerer().respond(to: challenge(), request: request(binding: binding), target: target, exchange: &exchange))
        let other = TLSChannelBinding.applicationData(certificateHash: [UInt8](repeating: 0x11, count: 32))
        XCTAssertThrowsError(try TestAcceptor(api: api, serviceKeytab: kdc.serviceKeytab, expectedBinding: other).step(first))
    }

    func testAForgedFinalTokenFailsMutualAuthentication() throws {
        let answerer = answerer()
        var exchange = AuthExchange()
        let first = try token(of: answerer.respond(to: challenge(), request: request(binding: nil), target: target, exchange: &exchange))
        var (reply, _) = try TestAcceptor(api: api, serviceKeytab: kdc.serviceKeytab, expectedBinding: nil).step(first)
        reply[reply.count - 3] ^= 0x01
        let forged = AuthResponseHead(status: 200, fields: [(name: "WWW-Authenticate", value: "Negotiate " + Base64.encode(reply))])
        XCTAssertEqual(answerer.complete(response: forged, target: target, exchange: &exchange), .mutualAuthFailed(.negotiate))
        XCTAssertTrue(exchange.mutualAuthFailure?.contains("mutual authentication") == true, "\(exchange.mutualAuthFailure ?? "nil")")
        XCTAssertNil(answerer.store.entry(for: ProtectionSpace(target: target, scheme: .negotiate, realm: nil)), "nothing learned from an impostor")
    }

    func testOverTLSNoTokenGoesWithoutTheBinding() throws {
        var exchange = AuthExchange()
        let decision = answerer().respond(to: challenge(), request: request(binding: nil).withTLS(), target: target, exchange: &exchange)
        guard case .passThrough(let reason) = decision else { return XCTFail("answered without a channel binding: \(decision)") }
        XCTAssertTrue(reason.contains("channel binding"), reason)
    }

    func testWithoutATicketTheNTLMIdentityAnswersAndSaysWhy() throws {
        kdc.stop()
        let answerer = answerer(alongside: .password(user: "CORP\\svc", password: "pw", workstation: nil), schemes: [.negotiate, .ntlm])
        var exchange = AuthExchange()
        let both = AuthResponseHead(status: 401, fields: [(name: "WWW-Authenticate", value: "Negotiate"), (name: "WWW-Authenticate", value: "NTLM")])
        guard case .answer(let answer) = answerer.respond(to: both, request: request(binding: nil), target: target, exchange: &exchange) else {
            return XCTFail("no NTLM fallback")
        }
        XCTAssertEqual(answer.scheme, .ntlm)
        XCTAssertTrue(answer.value.hasPrefix("NTLM "))
        XCTAssertTrue(answer.fallbackReason?.contains("negotiate: no Kerberos ticket for HTTP@localhost") == true, answer.fallbackReason ?? "nil")
    }

    func testPreemptiveOnlyOnAConnectionNotYetAuthenticated() throws {
        let answerer = answerer()
        answerer.store.learn(LearnedSpace(space: ProtectionSpace(target: target, scheme: .negotiate, realm: nil), credentialName: "krb",
                                          persistence: .session, learnedAt: Date()))
        var exchange = AuthExchange()
        XCTAssertNil(answerer.preemptiveAnswer(request: request(binding: nil), target: target, exchange: &exchange),
                     "no token before the connection is known")
        var fresh = request(binding: nil)
        fresh.connection = UpstreamConnectionFacts(authenticatedAs: nil)
        XCTAssertEqual(answerer.preemptiveAnswer(request: fresh, target: target, exchange: &exchange)?.scheme, .negotiate)
        var authenticated = request(binding: nil)
        authenticated.connection = UpstreamConnectionFacts(authenticatedAs: "krb")
        var again = AuthExchange()
        XCTAssertNil(answerer.preemptiveAnswer(request: authenticated, target: target, exchange: &again),
                     "a connection already authenticated as this credential needs no new handshake")
    }
}

private extension AuthRequest {
    func withTLS() -> AuthRequest {
        var copy = self
        copy.connectionIsTLS = true
        return copy
    }
}
