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

    /// The evidence every accepted answer leaves: accepted for GET /x.
    func accepted(_ scheme: AuthSchemeName) -> AuthStoreEffect {
        .accepted(space(scheme), on: ResourceKey(method: "GET", target: "/x"))
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
        XCTAssertEqual(completion.effects, [accepted(.basic), .learn(learned(.basic, .session))])
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
        let refusal = Refusal(space: space(.basic), resource: ResourceKey(method: "GET", target: "/x"), credentialName: "svc", at: now)
        XCTAssertEqual(rejectedTwice.effects, [.refused(refusal)])
        XCTAssertNil(store.standing(of: space(.basic)), "recorded only when the driver applies it")
        XCTAssertEqual(store.apply(rejectedTwice.effects).refusal, .counted, "one request refused, never accepted: not yet a lock-out")
        XCTAssertFalse(store.isLockedOut(space(.basic)))
        XCTAssertEqual(subject.complete(response: challenge, target: origin, exchange: &exchange).effects, [], "a rejection learns nothing")

        var elsewhere = refusal
        elsewhere.resource = ResourceKey(method: "GET", target: "/y")
        let applied = store.apply([.refused(elsewhere)])
        guard case .lockedOut(let lockOut, isNew: true)? = applied.refusal else { return XCTFail("\(String(describing: applied.refusal))") }
        XCTAssertEqual(applied.newlyLockedOut, [lockOut], "reported the first time")
        XCTAssertTrue(store.isLockedOut(space(.basic)))
        XCTAssertEqual(store.apply([.refused(elsewhere)]).newlyLockedOut, [], "and only the first time")
    }

    func testRejectedPreemptiveAnswerIsAnsweredAfreshKeepingWhatWasLearned() {
        let store = ProtectionSpaceStore()
        let subject = answerer(AuthRule(credentialName: "svc", schemes: [.basic], maxFailures: 1), store: store)
        store.learn(learned(.basic, .session))
        var exchange = AuthExchange()
        XCTAssertNotNil(subject.preemptiveAnswer(request: tls, target: origin, exchange: &exchange))
        let step = subject.respond(to: unauthorized(#"Basic realm="r""#), request: tls, target: origin, exchange: &exchange)
        guard case .answer = step.result else { return XCTFail("\(step.result)") }
        XCTAssertEqual(step.effects, [], "the fresh answer's fate tells whether the credential or this request was refused")
        XCTAssertNil(exchange.failures[space(.basic)], "and the preemptive refusal counts nothing")
        XCTAssertNotNil(store.entry(for: space(.basic)), "the other requests keep their preemptive answer meanwhile")
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
        XCTAssertEqual(completion.effects, [accepted(.digest), .learn(learned(.digest, .session, digest: session)),
                                            .returnDigestSession(session, to: space(.digest))])
        store.apply(completion.effects)
        var next = AuthExchange()
        XCTAssertTrue(subject.preemptiveAnswer(request: tls, target: origin, exchange: &next)?.value.text.contains(#"nonce="new", nc=00000002"#) ?? false)
        XCTAssertEqual(subject.complete(response: ok, target: origin, exchange: &next).effects, [accepted(.digest)],
                       "a preemptive answer learns nothing new; its session goes back to the candidate it was lent to, not the store")
        var after = AuthExchange()
        XCTAssertTrue(subject.preemptiveAnswer(request: tls, target: origin, exchange: &after)?.value.text.contains(#"nonce="new", nc=00000003"#) ?? false)
    }

    /// Counts reserved ahead for a shelved session and not used are taken back when it returns,
    /// unless another session counted past them: the next count is then the exact next one, or
    /// past everything given out. Taking counts of a nonce another session is ahead on moves the
    /// epoch (a shelved session then reserves anew before its next answer).
    func testReservedCountsComeBackUnlessCountedPast() {
        let store = ProtectionSpaceStore()
        let digest = space(.digest)
        store.returnDigestSession(DigestSession(realm: "r", nonce: "n", nonceCount: 1), to: digest)
        guard var shelved = store.leaseDigestSession(digest) else { return XCTFail("no idle session") }
        store.reserveNonceCounts(&shelved, 64, in: digest)
        XCTAssertEqual(shelved.nextNonceCount(), 2)
        XCTAssertEqual(shelved.nextNonceCount(), 3)
        store.returnDigestSession(shelved, to: digest)
        guard var again = store.leaseCountedDigestSession(digest) else { return XCTFail("the session did not come back") }
        XCTAssertEqual(again.nextNonceCount(), 4, "the 61 counts not used were taken back")

        store.reserveNonceCounts(&again, 64, in: digest)   // 5...68 for it
        let epoch = store.countsEpoch
        var other = DigestSession(realm: "r", nonce: "n")   // the same nonce from another challenge
        store.reserveNonceCount(&other, in: digest)
        XCTAssertEqual(other.nextNonceCount(), 69, "past the block")
        XCTAssertNotEqual(store.countsEpoch, epoch, "the shelved session must reserve anew")
        XCTAssertEqual(again.nextNonceCount(), 5)
        store.returnDigestSession(again, to: digest)
        store.returnDigestSession(other, to: digest)
        var last = store.leaseCountedDigestSession(digest)
        XCTAssertEqual(last?.nextNonceCount(), 70, "nothing taken back past another's count")
    }

    func testPersistenceDecidesWhatIsLearnedAndWritten() {
        for (persistence, expected) in [(Persistence.none, [accepted(.basic)]),
                                        (.session, [accepted(.basic), .learn(learned(.basic, .session))]),
                                        (.permanent, [accepted(.basic), .learn(learned(.basic, .permanent)), .persist])] {
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
                       [accepted(.digest), .learn(learned(.digest, .permanent, digest: session)), .returnDigestSession(session, to: space(.digest)), .persist])
    }
}
