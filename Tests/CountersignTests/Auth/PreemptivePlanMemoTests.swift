import FoundationEssentials
import XCTest
@testable import CountersignAuth

/// A worker's last preemptive plan (`PreemptivePlanMemo`) is only ever the plan the shared
/// plans would give: the next request sees what was learned, forgotten or locked out, and
/// another target or another answerer (another host entry, a reload) never gets it.
final class PreemptivePlanMemoTests: XCTestCase {
    let origin = AuthTarget(host: "api.example.com", port: 443)
    let other = AuthTarget(host: "other.example.com", port: 443)
    let tls = AuthRequest(method: "GET", target: "/x", connectionIsTLS: true)
    let credentials: [String: CredentialMaterial] = ["svc": .password(user: "svc", password: "pw", workstation: nil), "token": .token("tkn")]
    let ok = AuthResponseHead(status: 200, fields: [])

    private func learnBasic(_ subject: ChallengeAnswerer, at target: AuthTarget) {
        var exchange = AuthExchange()
        let challenge = AuthResponseHead(status: 401, fields: [("WWW-Authenticate", #"Basic realm="r""#)])
        guard case .answer = subject.respondApplying(to: challenge, request: tls, target: target, exchange: &exchange) else {
            return XCTFail("the challenge was not answered")
        }
        XCTAssertEqual(subject.completeApplying(response: ok, target: target, exchange: &exchange), .answered(.basic))
    }

    /// What a request with `memo` would send ahead of a challenge.
    private func preemptive(_ subject: ChallengeAnswerer, memo: PreemptivePlanMemo, target: AuthTarget) -> String? {
        var exchange = AuthExchange()
        let plan = subject.preemptivePlan(for: target, memo: memo)
        return subject.preemptiveAnswer(from: plan, facts: { RequestFacts(self.tls) }, request: { self.tls }, target: target, exchange: &exchange)?.value.text
    }

    func testTheNextRequestSeesWhatWasLearnedForgottenAndLockedOut() {
        let store = ProtectionSpaceStore()
        let subject = ChallengeAnswerer(rules: [AuthRule(credentialName: "svc", schemes: [.basic])], credentials: credentials, store: store)
        let memo = PreemptivePlanMemo()
        XCTAssertNil(preemptive(subject, memo: memo, target: origin), "nothing learned yet")
        learnBasic(subject, at: origin)
        XCTAssertEqual(preemptive(subject, memo: memo, target: origin), "Basic c3ZjOnB3", "learned: the kept empty plan is not used again")
        XCTAssertEqual(preemptive(subject, memo: memo, target: origin), "Basic c3ZjOnB3")
        let space = ProtectionSpace(target: origin, scheme: .basic, realm: "r")
        store.forget(space)
        XCTAssertNil(preemptive(subject, memo: memo, target: origin), "forgotten")
        learnBasic(subject, at: origin)
        XCTAssertNotNil(preemptive(subject, memo: memo, target: origin))
        _ = store.refuse(space, on: ResourceKey(method: "GET", target: "/x"), credentialName: "svc", at: Date())   // accepted there before
        XCTAssertNil(preemptive(subject, memo: memo, target: origin), "locked out")
    }

    func testAnotherTargetOrAnswererNeverGetsTheKeptPlan() {
        let store = ProtectionSpaceStore()
        let basic = ChallengeAnswerer(rules: [AuthRule(credentialName: "svc", schemes: [.basic])], credentials: credentials, store: store)
        let memo = PreemptivePlanMemo()
        learnBasic(basic, at: origin)
        XCTAssertEqual(preemptive(basic, memo: memo, target: origin), "Basic c3ZjOnB3")
        XCTAssertNil(preemptive(basic, memo: memo, target: other), "learned for another host")
        XCTAssertEqual(preemptive(basic, memo: memo, target: origin), "Basic c3ZjOnB3")
        // Another host entry's answerer on the same store (its rule names another credential),
        // and a reload's (a store of its own): neither answers with svc's password.
        let bearer = ChallengeAnswerer(rules: [AuthRule(credentialName: "token", schemes: [.bearer])], credentials: credentials, store: store)
        XCTAssertNil(preemptive(bearer, memo: memo, target: origin))
        XCTAssertEqual(preemptive(basic, memo: memo, target: origin), "Basic c3ZjOnB3")
        let reloaded = ChallengeAnswerer(rules: [AuthRule(credentialName: "svc", schemes: [.basic])], credentials: credentials, store: ProtectionSpaceStore())
        XCTAssertNil(preemptive(reloaded, memo: memo, target: origin), "a reload's store has learned nothing")
    }
}
