import Foundation
import XCTest
@testable import CountersignAuth
import CountersignSupport

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

    /// `respond`, with the first token made where the proxy makes it (off the loop, here inline)
    /// whenever the answerer asks for one, as the exchange driver does.
    private func respond(_ answerer: ChallengeAnswerer, to response: AuthResponseHead, request: AuthRequest,
                         exchange: inout AuthExchange) -> ChallengeDecision {
        var decision = answerer.respondApplying(to: response, request: request, target: target, exchange: &exchange)
        while case .prepareKerberos(let kerberos) = decision {
            exchange.adopt(PreparedNegotiate.make(kerberos))
            decision = answerer.respondApplying(to: response, request: request, target: target, exchange: &exchange)
        }
        return decision
    }

    private func preemptive(_ answerer: ChallengeAnswerer, request: AuthRequest, exchange: inout AuthExchange) -> AuthAnswer? {
        if let answer = answerer.preemptiveAnswer(request: request, target: target, exchange: &exchange) { return answer }
        guard let kerberos = exchange.preemptiveKerberos else { return nil }
        exchange.adopt(PreparedNegotiate.make(kerberos))
        return answerer.preemptiveAnswer(request: request, target: target, exchange: &exchange)
    }

    private func token(of decision: ChallengeDecision) throws -> [UInt8] {
        guard case .answer(let answer) = decision else { throw XCTSkip("no answer: \(decision)") }
        XCTAssertTrue(answer.bindsConnection, "a Negotiate answer binds the connection")
        return try XCTUnwrap(Base64.decode(String(answer.value.text.dropFirst("Negotiate ".count))))
    }

    func testTheTokenCarriesTheChannelBindingAndTheFinalTokenIsVerified() throws {
        let answerer = answerer()
        var exchange = AuthExchange()
        let first = try token(of: respond(answerer, to: challenge(), request: request(binding: binding), exchange: &exchange))
        let service = try TestAcceptor(api: api, serviceKeytab: kdc.serviceKeytab, expectedBinding: binding)
        let (reply, complete) = try service.step(first)
        XCTAssertTrue(complete)
        let ok = AuthResponseHead(status: 200, fields: [(name: "WWW-Authenticate", value: "Negotiate " + Base64.encode(reply))])
        XCTAssertEqual(answerer.completeApplying(response: ok, target: target, exchange: &exchange), .answered(.negotiate))
        XCTAssertNotNil(answerer.store.entry(for: ProtectionSpace(target: target, scheme: .negotiate, realm: nil)))
    }

    func testAnAcceptorExpectingAnotherBindingRefusesTheToken() throws {
        var exchange = AuthExchange()
        let first = try token(of: respond(answerer(), to: challenge(), request: request(binding: binding), exchange: &exchange))
        let other = TLSChannelBinding.applicationData(certificateHash: [UInt8](repeating: 0x11, count: 32))
        XCTAssertThrowsError(try TestAcceptor(api: api, serviceKeytab: kdc.serviceKeytab, expectedBinding: other).step(first))
    }

    func testAForgedFinalTokenFailsMutualAuthentication() throws {
        let answerer = answerer()
        var exchange = AuthExchange()
        let first = try token(of: respond(answerer, to: challenge(), request: request(binding: nil), exchange: &exchange))
        var (reply, _) = try TestAcceptor(api: api, serviceKeytab: kdc.serviceKeytab, expectedBinding: nil).step(first)
        reply[reply.count - 3] ^= 0x01
        let forged = AuthResponseHead(status: 200, fields: [(name: "WWW-Authenticate", value: "Negotiate " + Base64.encode(reply))])
        XCTAssertEqual(answerer.completeApplying(response: forged, target: target, exchange: &exchange), .mutualAuthFailed(.negotiate))
        XCTAssertTrue(exchange.mutualAuthFailure?.contains("mutual authentication") == true, "\(exchange.mutualAuthFailure ?? "nil")")
        XCTAssertNil(answerer.store.entry(for: ProtectionSpace(target: target, scheme: .negotiate, realm: nil)), "nothing learned from an impostor")
    }

    func testOverTLSNoTokenGoesWithoutTheBinding() throws {
        var exchange = AuthExchange()
        let decision = respond(answerer(), to: challenge(), request: request(binding: nil).withTLS(), exchange: &exchange)
        guard case .passThrough(let reason) = decision else { return XCTFail("answered without a channel binding: \(decision)") }
        XCTAssertTrue(reason.contains("channel binding"), reason)
    }

    func testWithoutATicketTheNTLMIdentityAnswersAndSaysWhy() throws {
        kdc.stop()
        let answerer = answerer(alongside: .password(user: "CORP\\svc", password: "pw", workstation: nil), schemes: [.negotiate, .ntlm])
        var exchange = AuthExchange()
        let both = AuthResponseHead(status: 401, fields: [(name: "WWW-Authenticate", value: "Negotiate"), (name: "WWW-Authenticate", value: "NTLM")])
        guard case .answer(let answer) = respond(answerer, to: both, request: request(binding: nil), exchange: &exchange) else {
            return XCTFail("no NTLM fallback")
        }
        XCTAssertEqual(answer.scheme, .ntlm)
        XCTAssertTrue(answer.value.text.hasPrefix("NTLM "))
        XCTAssertTrue(answer.fallbackReason?.contains("negotiate: no Kerberos ticket for HTTP@localhost") == true, answer.fallbackReason ?? "nil")
    }

    func testTheAnswererAsksForTheFirstTokenInsteadOfWaitingOnTheKDC() throws {
        kdc.stop()   // a KDC that would make a synchronous call wait
        let answerer = answerer()
        var exchange = AuthExchange()
        let start = Date()
        guard case .prepareKerberos(let kerberos) = answerer.respondApplying(to: challenge(), request: request(binding: binding), target: target,
                                                                     exchange: &exchange) else {
            return XCTFail("the first token was not left to the KDC threads")
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 0.5)
        XCTAssertEqual(kerberos.service, "HTTP@localhost")
        XCTAssertEqual(kerberos.bindings, binding)
    }

    func testATokenMadeForAnotherConnectionIsNotSent() throws {
        let answerer = answerer()
        var exchange = AuthExchange()
        guard case .prepareKerberos(let kerberos) = answerer.respondApplying(to: challenge(), request: request(binding: binding), target: target,
                                                                     exchange: &exchange) else { return XCTFail("no request") }
        exchange.adopt(PreparedNegotiate.make(kerberos))
        let other = TLSChannelBinding.applicationData(certificateHash: [UInt8](repeating: 0x11, count: 32))
        guard case .prepareKerberos(let again) = answerer.respondApplying(to: challenge(), request: request(binding: other), target: target,
                                                                  exchange: &exchange) else {
            return XCTFail("a token bound to another TLS connection was used")
        }
        XCTAssertEqual(again.bindings, other)
    }

    func testPreemptiveOnlyOnAConnectionNotYetAuthenticated() throws {
        let answerer = answerer()
        answerer.store.learn(LearnedSpace(space: ProtectionSpace(target: target, scheme: .negotiate, realm: nil), credentialName: "krb",
                                          persistence: .session, learnedAt: Date()))
        var exchange = AuthExchange()
        XCTAssertNil(preemptive(answerer, request: request(binding: nil), exchange: &exchange),
                     "no token before the connection is known")
        var fresh = request(binding: nil)
        fresh.connection = UpstreamConnectionFacts(authenticatedAs: nil)
        XCTAssertEqual(preemptive(answerer, request: fresh, exchange: &exchange)?.scheme, .negotiate)
        var authenticated = request(binding: nil)
        authenticated.connection = UpstreamConnectionFacts(authenticatedAs: "krb")
        var again = AuthExchange()
        XCTAssertNil(preemptive(answerer, request: authenticated, exchange: &again),
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
