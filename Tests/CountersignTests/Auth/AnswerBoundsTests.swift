import XCTest
@testable import CountersignAuth

/// SPEC "Answering challenges" 5: one client request draws at most `1 + max_failures` answers
/// in all (plus one `stale` retry), and only the protection space whose credential was really
/// rejected `max_failures` times is locked out.
final class AnswerBoundsTests: XCTestCase {
    let origin = AuthTarget(host: "api.example.com", port: 443)
    let tls = AuthRequest(method: "GET", target: "/x", connectionIsTLS: true)
    let credentials: [String: CredentialMaterial] = [
        "svc": .password(user: "svc", password: "pw", workstation: nil),
        "corp": .password(user: "CORP\\svc", password: "pw", workstation: nil),
        "hash": .ntHash(user: "CORP\\svc", hash: [UInt8](repeating: 1, count: 16), workstation: nil),
        "token": .token("tkn"),
    ]
    let ok = AuthResponseHead(status: 200, fields: [])

    func answerer(_ rules: [AuthRule], store: ProtectionSpaceStore = ProtectionSpaceStore()) -> ChallengeAnswerer {
        var answerer = ChallengeAnswerer(rules: rules, credentials: credentials, store: store)
        answerer.digestResponder = DigestResponder(clientNonce: { "cn" })
        return answerer
    }

    func unauthorized(_ challenges: String...) -> AuthResponseHead {
        AuthResponseHead(status: 401, fields: challenges.map { ("WWW-Authenticate", $0) })
    }

    /// One exchange answers Basic in `realm` and succeeds: the space is learned.
    func learnBasic(_ subject: ChallengeAnswerer, realm: String) {
        var learn = AuthExchange()
        _ = subject.respondApplying(to: unauthorized(#"Basic realm="\#(realm)""#), request: tls, target: origin, exchange: &learn)
        _ = subject.completeApplying(response: ok, target: origin, exchange: &learn)
    }

    /// Answers `next(i)` until the answerer stops; returns how many answers it gave.
    func answersDrawn(_ subject: ChallengeAnswerer, exchange: inout AuthExchange, limit: Int = 50, request: AuthRequest? = nil,
                      _ next: (Int) -> AuthResponseHead) -> Int {
        var answers = 0
        for round in 0..<limit {
            guard case .answer = subject.respondApplying(to: next(round), request: request ?? tls, target: origin, exchange: &exchange) else { break }
            answers += 1
        }
        return answers
    }

    // MARK: The budget itself

    func testBudgetAllowsOnePlusMaxFailuresAndOneStaleRetry() {
        var budget = AttemptBudget()
        for _ in 0..<3 {
            XCTAssertTrue(budget.allowsAnswer(maxFailures: 2))
            budget.spend()
        }
        XCTAssertFalse(budget.allowsAnswer(maxFailures: 2))
        XCTAssertTrue(budget.grantStaleRetry())
        XCTAssertTrue(budget.allowsAnswer(maxFailures: 2), "a stale nonce earns one more answer")
        budget.spend()
        XCTAssertFalse(budget.grantStaleRetry(), "only once per request")
        XCTAssertFalse(budget.allowsAnswer(maxFailures: 2))
    }

    // MARK: A server naming something new in every 401

    func testNewRealmInEveryChallengeDrawsOnePlusMaxFailuresAnswers() {
        for maxFailures in [1, 2, 5] {
            let subject = answerer([AuthRule(credentialName: "svc", schemes: [.basic], maxFailures: maxFailures)])
            var exchange = AuthExchange()
            let drawn = answersDrawn(subject, exchange: &exchange) { unauthorized(#"Basic realm="r\#($0)""#) }
            XCTAssertEqual(drawn, 1 + maxFailures, "max_failures \(maxFailures)")
        }
    }

    func testAlternatingSchemesAndRealmsShareOneBudget() {
        let subject = answerer([AuthRule(credentialName: "svc", maxFailures: 2)])
        var exchange = AuthExchange()
        let drawn = answersDrawn(subject, exchange: &exchange) { round in
            round.isMultiple(of: 2) ? unauthorized(#"Basic realm="b\#(round)""#)
                                    : unauthorized(#"Digest realm="d\#(round)", nonce="n\#(round)", qop="auth""#)
        }
        XCTAssertEqual(drawn, 3)
    }

    func testStaleNoncesInNewRealmsEarnNothingExtra() {
        let subject = answerer([AuthRule(credentialName: "svc", maxFailures: 1)])
        var exchange = AuthExchange()
        let drawn = answersDrawn(subject, exchange: &exchange) { unauthorized(#"Digest realm="r\#($0)", nonce="n\#($0)", qop="auth", stale=true"#) }
        XCTAssertEqual(drawn, 2, "stale=true counts only for the realm just answered")
    }

    func testOneStaleRetryOnTopOfTheBudget() {
        let subject = answerer([AuthRule(credentialName: "svc", maxFailures: 1)])
        var exchange = AuthExchange()
        // r0 answered; r0 stale (uncounted retry); then a new realm each time.
        let drawn = answersDrawn(subject, exchange: &exchange) { round in
            round == 1 ? unauthorized(#"Digest realm="r0", nonce="n1", qop="auth", stale=true"#)
                       : unauthorized(#"Digest realm="r\#(round)", nonce="n\#(round)", qop="auth""#)
        }
        XCTAssertEqual(drawn, 1 + 1 + 1, "1 + max_failures, plus the one stale retry")
    }

    func testPreemptiveAnswerCountsAgainstTheBudget() {
        let store = ProtectionSpaceStore()
        let subject = answerer([AuthRule(credentialName: "svc", schemes: [.basic], maxFailures: 1)], store: store)
        learnBasic(subject, realm: "r")

        var exchange = AuthExchange()
        XCTAssertNotNil(subject.preemptiveAnswer(request: tls, target: origin, exchange: &exchange))
        let drawn = answersDrawn(subject, exchange: &exchange) { unauthorized(#"Basic realm="other\#($0)""#) }
        XCTAssertEqual(drawn, 1, "the preemptive answer was the first of 1 + max_failures")
    }

    func testNTLMHandshakeLegsAreOneAttempt() {
        var subject = answerer([AuthRule(credentialName: "corp", schemes: [.ntlm], maxFailures: 1)])
        subject.ntlmEntropy = NTLMEntropy(clientChallenge: { [UInt8](repeating: 1, count: 8) },
                                          randomSessionKey: { [UInt8](repeating: 2, count: 16) }, now: { 0 })
        let type2 = "TlRMTVNTUAACAAAADAAMADgAAAAzgoriASNFZ4mrze8AAAAAAAAAACQAJABEAAAABgBwFwAAAA9TAGUAcgB2AGUAcgACAAwARABvAG0AYQBpAG4AAQAMAFMAZQByAHYAZQByAAAAAAA="
        var exchange = AuthExchange()
        // negotiate, authenticate (rejected), negotiate, authenticate (rejected): 2 attempts.
        let drawn = answersDrawn(subject, exchange: &exchange) { round in
            round.isMultiple(of: 2) ? unauthorized("NTLM") : unauthorized("NTLM " + type2)
        }
        XCTAssertEqual(drawn, 2, "negotiate + authenticate is one attempt; max_failures 1 allows the one")
        XCTAssertEqual(exchange.budget.answered, 1)
    }

    // MARK: Lock-out scope

    func testRejectionLocksOutThatSpaceOnly() {
        let store = ProtectionSpaceStore()
        let subject = answerer([AuthRule(credentialName: "svc", schemes: [.basic], maxFailures: 1)], store: store)
        var first = AuthExchange()
        XCTAssertEqual(answersDrawn(subject, exchange: &first) { _ in unauthorized(#"Basic realm="admin""#) }, 1)
        XCTAssertFalse(store.isLockedOut(ProtectionSpace(target: origin, scheme: .basic, realm: "admin")),
                       "one refused request, never accepted: it may be a path the account may not see")
        var second = AuthExchange()
        let elsewhere = AuthRequest(method: "GET", target: "/y", connectionIsTLS: true)
        XCTAssertEqual(answersDrawn(subject, exchange: &second, request: elsewhere) { _ in unauthorized(#"Basic realm="admin""#) }, 1)
        XCTAssertTrue(store.isLockedOut(ProtectionSpace(target: origin, scheme: .basic, realm: "admin")),
                      "refused for two different requests and never accepted: a wrong credential")

        var again = AuthExchange()
        guard case .passThrough(let reason) = subject.respondApplying(to: unauthorized(#"Basic realm="admin""#), request: tls, target: origin, exchange: &again) else {
            return XCTFail("a locked-out space is not answered")
        }
        XCTAssertTrue(reason.contains("until the configuration reloads"), reason)
        XCTAssertNotNil(again.skippedLockedOut)

        var other = AuthExchange()
        guard case .answer = subject.respondApplying(to: unauthorized(#"Basic realm="users""#), request: tls, target: origin, exchange: &other) else {
            return XCTFail("another realm of the same host is still answered")
        }
        var otherPort = AuthExchange()
        guard case .answer = subject.respondApplying(to: unauthorized(#"Basic realm="admin""#), request: tls,
                                             target: AuthTarget(host: "api.example.com", port: 8443), exchange: &otherPort) else {
            return XCTFail("the same realm on another port is another space")
        }
    }

    func testLockedOutSchemeFallsToTheNextOffered() {
        let store = ProtectionSpaceStore()
        store.lockOut(ProtectionSpace(target: origin, scheme: .digest, realm: "r"))
        let subject = answerer([AuthRule(credentialName: "svc", schemes: [.digest, .basic])], store: store)
        var exchange = AuthExchange()
        let decision = subject.respondApplying(to: unauthorized(#"Digest realm="r", nonce="n", qop="auth""#, #"Basic realm="r""#),
                                       request: tls, target: origin, exchange: &exchange)
        guard case .answer(let answer) = decision else { return XCTFail("\(decision)") }
        XCTAssertEqual(answer.scheme, .basic)
    }

    func testChallengeForAnotherRealmRejectsNothing() {
        // The learned answer for "real" goes preemptively; the path wants a realm no rule covers.
        let store = ProtectionSpaceStore()
        let subject = answerer([AuthRule(credentialName: "svc", schemes: [.basic], realm: "real", maxFailures: 1)], store: store)
        learnBasic(subject, realm: "real")
        for _ in 0..<3 {
            var exchange = AuthExchange()
            XCTAssertNotNil(subject.preemptiveAnswer(request: tls, target: origin, exchange: &exchange))
            guard case .passThrough = subject.respondApplying(to: unauthorized(#"Basic realm="unknown""#), request: tls, target: origin, exchange: &exchange) else {
                return XCTFail("no rule covers realm unknown")
            }
            XCTAssertEqual(subject.completeApplying(response: unauthorized(#"Basic realm="unknown""#), target: origin, exchange: &exchange), .rejected(.basic))
        }
        XCTAssertFalse(store.isLockedOut(ProtectionSpace(target: origin, scheme: .basic, realm: "real")))
        var next = AuthExchange()
        XCTAssertNotNil(subject.preemptiveAnswer(request: tls, target: origin, exchange: &next), "what was learned of \"real\" is kept")
    }

    func testUnreplayableBodyPassThroughCountsNothing() {
        let store = ProtectionSpaceStore()
        let subject = answerer([AuthRule(credentialName: "svc", schemes: [.basic], maxFailures: 1)], store: store)
        learnBasic(subject, realm: "r")
        var upload = AuthExchange()
        XCTAssertNotNil(subject.preemptiveAnswer(request: tls, target: origin, exchange: &upload))
        var streamed = tls
        streamed.bodyReplayable = false
        guard case .passThrough = subject.respondApplying(to: unauthorized(#"Basic realm="r""#), request: streamed, target: origin, exchange: &upload) else {
            return XCTFail("an unreplayable body cannot be answered")
        }
        _ = subject.completeApplying(response: unauthorized(#"Basic realm="r""#), target: origin, exchange: &upload)
        XCTAssertFalse(store.isLockedOut(ProtectionSpace(target: origin, scheme: .basic, realm: "r")))
    }

    func testLearnedSpacesPerHostAreBounded() {
        // A server naming a new realm per request, and accepting each answer, must not grow
        // the store (and every preemptive search) without bound.
        let store = ProtectionSpaceStore()
        let start = Date(timeIntervalSince1970: 1000)
        for index in 0..<(ProtectionSpaceStore.maxSpacesPerTarget + 10) {
            store.learn(LearnedSpace(space: ProtectionSpace(target: origin, scheme: .basic, realm: "r\(index)"), credentialName: "svc",
                                     persistence: .session, learnedAt: start.addingTimeInterval(Double(index))))
        }
        let other = AuthTarget(host: "other.example.com", port: 443)
        store.learn(LearnedSpace(space: ProtectionSpace(target: other, scheme: .basic, realm: "r"), credentialName: "svc",
                                 persistence: .session, learnedAt: start))
        let kept = store.entries(for: origin)
        XCTAssertEqual(kept.count, ProtectionSpaceStore.maxSpacesPerTarget)
        XCTAssertEqual(kept.first?.space.realm, "r\(ProtectionSpaceStore.maxSpacesPerTarget + 9)", "the newest stay")
        XCTAssertNil(store.entry(for: ProtectionSpace(target: origin, scheme: .basic, realm: "r0")), "the oldest went")
        XCTAssertEqual(store.entries(for: other).count, 1, "another host keeps its own")
    }

    // MARK: Connection binding

    func testConnectionBindingCredentialIsTheRealmlessRuleThatCanAnswerNTLM() {
        XCTAssertEqual(answerer([AuthRule(credentialName: "svc", realm: "admin"), AuthRule(credentialName: "corp")]).connectionBindingCredential, "corp")
        XCTAssertEqual(answerer([AuthRule(credentialName: "hash")]).connectionBindingCredential, "hash")
        XCTAssertNil(answerer([AuthRule(credentialName: "svc", schemes: [.basic])]).connectionBindingCredential)
        XCTAssertNil(answerer([AuthRule(credentialName: "token")]).connectionBindingCredential)
        XCTAssertNil(answerer([AuthRule(credentialName: "svc", schemes: [.basic]), AuthRule(credentialName: "corp")]).connectionBindingCredential,
                     "the first realm-less rule takes every realm-less challenge")
    }

    func testNTLMAnswerNamesItsCredential() {
        let subject = answerer([AuthRule(credentialName: "svc", schemes: [.basic], realm: "admin"), AuthRule(credentialName: "corp")])
        var exchange = AuthExchange()
        guard case .answer(let answer) = subject.respondApplying(to: unauthorized("NTLM"), request: tls, target: origin, exchange: &exchange) else {
            return XCTFail("NTLM is answered")
        }
        XCTAssertTrue(answer.bindsConnection)
        XCTAssertEqual(answer.credentialName, "corp")
    }

    func testClientConnectionBoundAuthorizationIsRecognised() {
        for value in ["NTLM TlRMTVNTUAABAAAA", "ntlm abc", "Negotiate YIIF", "  negotiate x", "Kerberos x", "NTLM", ", NTLM x", "NT\u{0}LM x"] {
            XCTAssertTrue(ConnectionBoundAuthorization.isPresent(inAuthorization: [value]), value)
        }
        for value in ["Basic dXNlcjpwYXNz", "Bearer tkn", "Digest username=\"u\"", "NTLMv2 x"] {
            XCTAssertFalse(ConnectionBoundAuthorization.isPresent(inAuthorization: [value]), value)
        }
        XCTAssertTrue(ConnectionBoundAuthorization.isPresent(inAuthorization: ["Basic x", "NTLM y"]), "any of several fields")
        XCTAssertFalse(ConnectionBoundAuthorization.isPresent(inAuthorization: []))
    }
}
