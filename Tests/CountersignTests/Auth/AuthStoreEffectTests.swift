import FoundationEssentials
import XCTest
@testable import CountersignAuth

/// The answerer decides and the driver changes the store: each decision and outcome names the
/// store effects it implies, and the store is untouched until they are applied.
final class AuthStoreEffectTests: XCTestCase {
    let origin = AuthTarget(host: "api.example.com", port: 443)
    let tls = AuthRequest(method: "GET", target: "/x", connectionIsTLS: true)
    let ok = AuthResponseHead(status: 200, fields: [])
    let now = Date(timeIntervalSince1970: 1_000_000)

    func answerer(_ rule: AuthRule, store: ProtectionSpaceStore = ProtectionSpaceStore()) -> ChallengeAnswerer {
        var answerer = ChallengeAnswerer(rules: [rule], credentials: ["svc": .password(user: "svc", password: "pw", workstation: nil)],
                                         store: store)
        answerer.digestResponder = DigestResponder(clientNonce: { "cn" })
        let now = self.now
        answerer.clock = { now }
        return answerer
    }

    func unauthorized(_ challenge: String) -> AuthResponseHead {
        AuthResponseHead(status: 401, fields: [("WWW-Authenticate", challenge)])
    }

    func space(_ scheme: AuthSchemeName, _ realm: String = "r") -> ProtectionSpace {
        ProtectionSpace(target: origin, scheme: scheme, realm: realm)
    }

    func learned(_ scheme: AuthSchemeName, _ persistence: Persistence, digest: DigestSession? = nil) -> LearnedSpace {
        LearnedSpace(space: space(scheme), credentialName: "svc", persistence: persistence, digest: digest, learnedAt: now)
    }

    func testAcceptedAnswerIsLearnedOnlyOnceApplied() {
        let store = ProtectionSpaceStore()
        let subject = answerer(AuthRule(credentialName: "svc", schemes: [.basic]), store: store)
        var exchange = AuthExchange()
        let decision = subject.respond(to: unauthorized(#"Basic realm="r""#), request: tls, target: origin, exchange: &exchange)
        XCTAssertEqual(decision.effects, [], "answering changes nothing in the store")
        let completion = subject.complete(response: ok, target: origin, exchange: &exchange)
        XCTAssertEqual(completion.result, .answered(.basic))
        XCTAssertEqual(completion.effects, [.learn(learned(.basic, .session))])
        XCTAssertNil(store.entry(for: space(.basic)), "the answerer does not write the store itself")
        XCTAssertEqual(store.apply(completion.effects), AppliedAuthEffects())
        XCTAssertEqual(store.entry(for: space(.basic)), learned(.basic, .session))
    }

    func testRejectionIsCountedWithoutTouchingTheStoreThenLocksOutAtMaxFailures() {
        let store = ProtectionSpaceStore()
        let subject = answerer(AuthRule(credentialName: "svc", schemes: [.basic], maxFailures: 2), store: store)
        let challenge = unauthorized(#"Basic realm="r""#)
        var exchange = AuthExchange()
        XCTAssertEqual(subject.respond(to: challenge, request: tls, target: origin, exchange: &exchange).effects, [])
        let rejectedOnce = subject.respond(to: challenge, request: tls, target: origin, exchange: &exchange)
        guard case .answer = rejectedOnce.result else { return XCTFail("one rejection of two allowed: \(rejectedOnce.result)") }
        XCTAssertEqual(rejectedOnce.effects, [], "a counted rejection lives in the exchange, not the store")
        XCTAssertEqual(exchange.failures[space(.basic)], 1)

        let rejectedTwice = subject.respond(to: challenge, request: tls, target: origin, exchange: &exchange)
        guard case .passThrough(let reason) = rejectedTwice.result else { return XCTFail("\(rejectedTwice.result)") }
        XCTAssertTrue(reason.contains("max_failures 2"), reason)
        XCTAssertEqual(rejectedTwice.effects, [.lockOut(space(.basic))])
        XCTAssertFalse(store.isLockedOut(space(.basic)), "locked out only when the driver applies it")
        XCTAssertEqual(store.apply(rejectedTwice.effects).newlyLockedOut, [space(.basic)], "reported the first time")
        XCTAssertTrue(store.isLockedOut(space(.basic)))
        XCTAssertEqual(store.apply(rejectedTwice.effects).newlyLockedOut, [], "and only the first time")
        XCTAssertEqual(subject.complete(response: challenge, target: origin, exchange: &exchange).effects, [], "a rejection learns nothing")
    }

    func testRejectedPreemptiveAnswerIsForgottenNotCounted() {
        let store = ProtectionSpaceStore()
        let subject = answerer(AuthRule(credentialName: "svc", schemes: [.basic], maxFailures: 1), store: store)
        store.learn(learned(.basic, .session))
        var exchange = AuthExchange()
        XCTAssertNotNil(subject.preemptiveAnswer(request: tls, target: origin, exchange: &exchange))
        let step = subject.respond(to: unauthorized(#"Basic realm="r""#), request: tls, target: origin, exchange: &exchange)
        guard case .answer = step.result else { return XCTFail("\(step.result)") }
        XCTAssertEqual(step.effects, [.forget(space(.basic))])
        XCTAssertNotNil(store.entry(for: space(.basic)))
        store.apply(step.effects)
        XCTAssertNil(store.entry(for: space(.basic)))
    }

    func testStaleDigestNonceForgetsAndCountsNothingAndReturnsTheNewSession() {
        let store = ProtectionSpaceStore()
        let subject = answerer(AuthRule(credentialName: "svc", schemes: [.digest], maxFailures: 1), store: store)
        var exchange = AuthExchange()
        _ = subject.respond(to: unauthorized(#"Digest realm="r", nonce="old", qop="auth""#), request: tls, target: origin, exchange: &exchange)
        let stale = subject.respond(to: unauthorized(#"Digest realm="r", nonce="new", qop="auth", stale=true"#),
                                    request: tls, target: origin, exchange: &exchange)
        guard case .answer(let answer) = stale.result else { return XCTFail("\(stale.result)") }
        XCTAssertTrue(answer.value.text.contains(#"nonce="new", nc=00000001"#), answer.value.text)
        XCTAssertEqual(stale.effects, [], "stale: no forget, no lock-out")
        XCTAssertNil(exchange.failures[space(.digest)], "and not counted")

        let session = DigestSession(realm: "r", nonce: "new", nonceCount: 1)
        let completion = subject.complete(response: ok, target: origin, exchange: &exchange)
        XCTAssertEqual(completion.effects, [.learn(learned(.digest, .session, digest: session)),
                                            .returnDigestSession(session, to: space(.digest))])
        store.apply(completion.effects)
        var next = AuthExchange()
        XCTAssertTrue(subject.preemptiveAnswer(request: tls, target: origin, exchange: &next)?.value.text.contains(#"nonce="new", nc=00000002"#) ?? false)
        XCTAssertEqual(subject.complete(response: ok, target: origin, exchange: &next).effects,
                       [.returnDigestSession(DigestSession(realm: "r", nonce: "new", nonceCount: 2), to: space(.digest))],
                       "a preemptive answer learns nothing new; its session comes back")
    }

    func testPersistenceDecidesWhatIsLearnedAndWritten() {
        for (persistence, expected) in [(Persistence.none, [AuthStoreEffect]()),
                                        (.session, [.learn(learned(.basic, .session))]),
                                        (.permanent, [.learn(learned(.basic, .permanent)), .persist])] {
            let subject = answerer(AuthRule(credentialName: "svc", schemes: [.basic], persistence: persistence))
            var exchange = AuthExchange()
            _ = subject.respond(to: unauthorized(#"Basic realm="r""#), request: tls, target: origin, exchange: &exchange)
            let completion = subject.complete(response: ok, target: origin, exchange: &exchange)
            XCTAssertEqual(completion.effects, expected, "\(persistence)")
            XCTAssertEqual(subject.store.apply(completion.effects).persist, persistence == .permanent, "\(persistence)")
        }
        let subject = answerer(AuthRule(credentialName: "svc", schemes: [.digest], persistence: .permanent))
        var exchange = AuthExchange()
        _ = subject.respond(to: unauthorized(#"Digest realm="r", nonce="n", qop="auth""#), request: tls, target: origin, exchange: &exchange)
        let session = DigestSession(realm: "r", nonce: "n", nonceCount: 1)
        XCTAssertEqual(subject.complete(response: ok, target: origin, exchange: &exchange).effects,
                       [.learn(learned(.digest, .permanent, digest: session)), .returnDigestSession(session, to: space(.digest)), .persist])
    }
}
