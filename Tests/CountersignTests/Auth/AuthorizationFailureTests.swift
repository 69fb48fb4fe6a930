import FoundationEssentials
import XCTest
@testable import CountersignAuth

/// A 401 for a path the account may not see is not a rejected password (issue 19 item 1): once
/// a space accepted the credential, a refusal for another request is passed to the client and
/// counts nothing; a refusal where it was accepted before locks the space out, with a reason.
final class AuthorizationFailureTests: XCTestCase {
    let origin = AuthTarget(host: "api.example.com", port: 443)
    let ok = AuthResponseHead(status: 200, fields: [])
    let basicChallenge = AuthResponseHead(status: 401, fields: [("WWW-Authenticate", #"Basic realm="r""#)])
    let space = ProtectionSpace(target: AuthTarget(host: "api.example.com", port: 443), scheme: .basic, realm: "r")

    func request(_ path: String) -> AuthRequest { AuthRequest(method: "GET", target: path, connectionIsTLS: true) }

    func answerer(maxFailures: Int = 1, store: ProtectionSpaceStore) -> ChallengeAnswerer {
        ChallengeAnswerer(rules: [AuthRule(credentialName: "svc", schemes: [.basic], maxFailures: maxFailures)],
                          credentials: ["svc": .password(user: "svc", password: "s3cret-pw", workstation: nil)], store: store)
    }

    /// One client request: a preemptive answer when one is learned, then answers to every 401
    /// until the answerer passes it on; the outcome with the final response.
    func exchange(_ subject: ChallengeAnswerer, _ path: String, responses: [AuthResponseHead], target: AuthTarget? = nil) -> (AuthOutcome, ChallengeDecision?, AuthExchange) {
        let target = target ?? origin
        var exchange = AuthExchange()
        _ = subject.preemptiveAnswer(request: request(path), target: target, exchange: &exchange)
        var last: ChallengeDecision?
        for response in responses {
            if response.status != target.challengeStatus { break }
            let decision = subject.respondApplying(to: response, request: request(path), target: target, exchange: &exchange)
            last = decision
            guard case .answer = decision else { break }
        }
        let final = responses.last!
        return (subject.completeApplying(response: final, target: target, exchange: &exchange), last, exchange)
    }

    func testForbiddenPathAfterAcceptanceGoesToTheClientAndLocksNothingOut() {
        let store = ProtectionSpaceStore()
        let subject = answerer(store: store)
        XCTAssertEqual(exchange(subject, "/ok", responses: [basicChallenge, ok]).0, .answered(.basic))

        for _ in 0..<5 {
            let (outcome, decision, _) = exchange(subject, "/forbidden", responses: [basicChallenge, basicChallenge])
            XCTAssertEqual(outcome, .notAuthorized(.basic))
            guard case .passThrough(let reason)? = decision else { return XCTFail("\(String(describing: decision))") }
            XCTAssertTrue(reason.contains("not authorized for this one"), reason)
        }
        XCTAssertFalse(store.isLockedOut(space), "a path the account may not see must not switch the credential off for everyone")
        XCTAssertNotNil(store.entry(for: space), "and what was learned stays")
        XCTAssertEqual(exchange(subject, "/ok", responses: [ok]).0, .preemptive(.basic), "other requests are still answered preemptively")
    }

    func testRefusalWhereTheCredentialWasAcceptedBeforeLocksOutWithAReason() {
        let store = ProtectionSpaceStore()
        let subject = answerer(store: store)
        XCTAssertEqual(exchange(subject, "/ok", responses: [basicChallenge, ok]).0, .answered(.basic))
        // The password was rotated: the very request that worked is refused, preemptively and afresh.
        let (outcome, _, _) = exchange(subject, "/ok", responses: [basicChallenge, basicChallenge])
        XCTAssertEqual(outcome, .rejected(.basic))
        guard let lockOut = store.lockOut(of: space) else { return XCTFail("a refusal where it was accepted before locks out") }
        XCTAssertEqual(lockOut.credentialName, "svc")
        XCTAssertTrue(lockOut.sentence.contains("GET /ok"), lockOut.sentence)
        XCTAssertTrue(lockOut.sentence.contains("until the configuration reloads"), lockOut.sentence)
        XCTAssertFalse(lockOut.sentence.contains("s3cret"), "never the secret")
        XCTAssertEqual(store.lockOuts(), [lockOut])
        XCTAssertNil(store.entry(for: space), "nothing learned of a locked-out space is answered")

        var next = AuthExchange()
        XCTAssertNil(subject.preemptiveAnswer(request: request("/other"), target: origin, exchange: &next))
        guard case .passThrough = subject.respondApplying(to: basicChallenge, request: request("/other"), target: origin, exchange: &next) else {
            return XCTFail("a locked-out space is not answered")
        }
        XCTAssertEqual(next.skippedLockedOut, space)
    }

    func testAnswersPerRequestStayBoundedForARotatedPasswordOnNewPaths() {
        let store = ProtectionSpaceStore()
        let subject = answerer(maxFailures: 3, store: store)
        XCTAssertEqual(exchange(subject, "/ok", responses: [basicChallenge, ok]).0, .answered(.basic))
        var exchangeState = AuthExchange()
        var answers = subject.preemptiveAnswer(request: request("/new"), target: origin, exchange: &exchangeState) == nil ? 0 : 1
        for _ in 0..<10 {
            guard case .answer = subject.respondApplying(to: basicChallenge, request: request("/new"), target: origin, exchange: &exchangeState) else { break }
            answers += 1
        }
        XCTAssertEqual(answers, 2, "preemptive, then one fresh answer: refused again for a path never accepted, it goes to the client")
    }

    /// A preemptive answer accepted again on the resource it was last accepted on asks nothing
    /// of the store (no standing changes); accepted on another resource the standing still
    /// learns it, so a later refusal there still reads as a changed password.
    func testRepeatedPreemptiveAcceptanceLeavesTheStoreAloneButANewResourceCounts() {
        let store = ProtectionSpaceStore()
        let subject = answerer(store: store)
        XCTAssertEqual(exchange(subject, "/a", responses: [basicChallenge, ok]).0, .answered(.basic))
        func preemptiveEffects(_ path: String) -> [AuthStoreEffect] {
            var state = AuthExchange()
            XCTAssertNotNil(subject.preemptiveAnswer(request: request(path), target: origin, exchange: &state))
            let step = subject.complete(response: ok, target: origin, exchange: &state)
            XCTAssertEqual(step.result, .preemptive(.basic))
            store.apply(step.effects)
            return step.effects
        }
        let a = ResourceKey(method: "GET", target: "/a"), b = ResourceKey(method: "GET", target: "/b")
        XCTAssertEqual(preemptiveEffects("/a"), [.accepted(space, on: a)], "the first through this plan tells the store")
        XCTAssertEqual(preemptiveEffects("/a"), [], "the same resource again changes nothing")
        XCTAssertEqual(preemptiveEffects("/b"), [.accepted(space, on: b)])
        XCTAssertEqual(preemptiveEffects("/a"), [.accepted(space, on: a)], "back to /a after /b: told again")
        XCTAssertEqual(store.standing(of: space), .accepted(on: [b, a]))
        // The password was rotated: refused where it was accepted, the space locks out.
        XCTAssertEqual(exchange(subject, "/b", responses: [basicChallenge, basicChallenge]).0, .rejected(.basic))
        XCTAssertTrue(store.isLockedOut(space))
    }

    /// The same for Digest's preemptive answers, which come off the candidate's session shelf
    /// and keep the last resource's key while requests repeat it: each answer's record still
    /// names its own request, so a new resource is told to the store and the same one is not.
    func testRepeatedDigestPreemptiveAcceptanceCountsEachResourceItsOwn() {
        let store = ProtectionSpaceStore()
        let subject = ChallengeAnswerer(rules: [AuthRule(credentialName: "svc", schemes: [.digest])],
                                        credentials: ["svc": .password(user: "svc", password: "s3cret-pw", workstation: nil)], store: store)
        let digestChallenge = AuthResponseHead(status: 401, fields: [("WWW-Authenticate", #"Digest realm="r", nonce="n0nce", qop="auth""#)])
        let digestSpace = ProtectionSpace(target: origin, scheme: .digest, realm: "r")
        XCTAssertEqual(exchange(subject, "/a", responses: [digestChallenge, ok]).0, .answered(.digest))
        func preemptiveEffects(_ method: String, _ path: String) -> [AuthStoreEffect] {
            var state = AuthExchange()
            let request = AuthRequest(method: method, target: path, connectionIsTLS: true)
            guard let answer = subject.preemptiveAnswer(request: request, target: origin, exchange: &state) else {
                XCTFail("a learned Digest space is answered ahead")
                return []
            }
            XCTAssertTrue(answer.value.text.contains(#"uri="\#(path)""#), answer.value.text)
            let step = subject.complete(response: ok, target: origin, exchange: &state)
            XCTAssertEqual(step.result, .preemptive(.digest))
            store.apply(step.effects)
            return step.effects.filter { if case .accepted = $0 { return true } else { return false } }
        }
        let a = ResourceKey(method: "GET", target: "/a"), b = ResourceKey(method: "GET", target: "/b")
        XCTAssertEqual(preemptiveEffects("GET", "/a"), [.accepted(digestSpace, on: a)], "the first through this plan tells the store")
        XCTAssertEqual(preemptiveEffects("GET", "/a"), [], "the same resource again changes nothing")
        XCTAssertEqual(preemptiveEffects("GET", "/b"), [.accepted(digestSpace, on: b)])
        XCTAssertEqual(preemptiveEffects("HEAD", "/b"), [.accepted(digestSpace, on: ResourceKey(method: "HEAD", target: "/b"))],
                       "another method is another resource")
        XCTAssertEqual(preemptiveEffects("GET", "/a"), [.accepted(digestSpace, on: a)], "back to /a: told again")
    }

    func testSuccessClearsTheRefusalsOfASpaceNeverAcceptedBefore() {
        let store = ProtectionSpaceStore()
        let subject = answerer(store: store)
        XCTAssertEqual(exchange(subject, "/a", responses: [basicChallenge, basicChallenge]).0, .rejected(.basic))
        XCTAssertEqual(store.standing(of: space), .unproven(refusedOn: [ResourceKey(method: "GET", target: "/a")]))
        XCTAssertEqual(exchange(subject, "/b", responses: [basicChallenge, ok]).0, .answered(.basic))
        XCTAssertEqual(store.standing(of: space), .accepted(on: [ResourceKey(method: "GET", target: "/b")]))
        XCTAssertEqual(exchange(subject, "/c", responses: [basicChallenge, basicChallenge]).0, .notAuthorized(.basic))
        XCTAssertFalse(store.isLockedOut(space))
    }

    func testOneRefusedRequestNeverAcceptedDoesNotLockOutButTwoDifferentOnesDo() {
        let store = ProtectionSpaceStore()
        let subject = answerer(store: store)
        for _ in 0..<3 { XCTAssertEqual(exchange(subject, "/admin", responses: [basicChallenge, basicChallenge]).0, .rejected(.basic)) }
        XCTAssertFalse(store.isLockedOut(space), "one hostile request, repeated, cannot switch the credential off")
        _ = exchange(subject, "/other", responses: [basicChallenge, basicChallenge])
        XCTAssertTrue(store.isLockedOut(space), "refused for two different requests and never accepted: a wrong password")
    }

    func testParentProxySpaceFollowsTheSameRule() {
        let store = ProtectionSpaceStore()
        let parent = AuthTarget(host: "proxy.corp", port: 3128, isProxy: true)
        let challenge = AuthResponseHead(status: 407, fields: [("Proxy-Authenticate", #"Basic realm="corp""#)])
        let established = AuthResponseHead(status: 200, fields: [])
        let subject = ChallengeAnswerer(rules: [AuthRule(credentialName: "svc", schemes: [.basic], allowPlaintext: true)],
                                        credentials: ["svc": .password(user: "svc", password: "pw", workstation: nil)], store: store)
        let parentSpace = ProtectionSpace(target: parent, scheme: .basic, realm: "corp")
        XCTAssertEqual(exchange(subject, "allowed.example:443", responses: [challenge, established], target: parent).0, .answered(.basic))
        XCTAssertEqual(exchange(subject, "denied.example:443", responses: [challenge, challenge], target: parent).0, .notAuthorized(.basic))
        XCTAssertFalse(store.isLockedOut(parentSpace), "a destination the parent denies this account locks nothing out")
        XCTAssertEqual(exchange(subject, "allowed.example:443", responses: [challenge, challenge], target: parent).0, .rejected(.basic))
        XCTAssertTrue(store.isLockedOut(parentSpace), "refused where it was accepted: the parent's password changed")
    }

    func testOnlyAnAnswerTheServerMadeIsEvidenceOfAcceptance() {
        let store = ProtectionSpaceStore()
        let subject = answerer(store: store)
        for status in [407, 502, 504] {
            _ = exchange(subject, "/x", responses: [basicChallenge, AuthResponseHead(status: status, fields: [])])
            XCTAssertNil(store.standing(of: space), "a \(status) (a parent's, or any hop's) proves nothing about the origin's verdict")
        }
        _ = exchange(subject, "/x", responses: [basicChallenge, AuthResponseHead(status: 403, fields: [])])
        XCTAssertEqual(store.standing(of: space), .accepted(on: [ResourceKey(method: "GET", target: "/x")]), "a 403 came after authentication")
    }
}
