import FoundationEssentials
import XCTest
@testable import CountersignAuth
import CountersignSupport

/// Decision-table cases for the per-exchange state machine.
final class ChallengeAnswererTests: XCTestCase {
    let origin = AuthTarget(host: "API.example.com", port: 443)
    let tls = AuthRequest(method: "GET", target: "/x", connectionIsTLS: true)
    let plaintext = AuthRequest(method: "GET", target: "/x", connectionIsTLS: false)
    let credentials: [String: CredentialMaterial] = [
        "svc": .password(user: "svc", password: "pw", workstation: nil),
        "token": .token("tkn"),
        "corp": .password(user: "CORP\\svc", password: "pw", workstation: "APPHOST"),
    ]

    func answerer(_ rules: [AuthRule], store: ProtectionSpaceStore = ProtectionSpaceStore()) -> ChallengeAnswerer {
        var answerer = ChallengeAnswerer(rules: rules, credentials: credentials, store: store)
        answerer.digestResponder = DigestResponder(clientNonce: { "cn" })
        return answerer
    }

    func unauthorized(_ challenges: String..., status: Int = 401) -> AuthResponseHead {
        AuthResponseHead(status: status, fields: challenges.map { (status == 407 ? "Proxy-Authenticate" : "WWW-Authenticate", $0) })
    }

    let ok = AuthResponseHead(status: 200, fields: [])

    func answer(_ decision: ChallengeDecision, file: StaticString = #filePath, line: UInt = #line) -> AuthAnswer? {
        guard case .answer(let answer) = decision else {
            XCTFail("expected an answer, got \(decision)", file: file, line: line)
            return nil
        }
        return answer
    }

    func passReason(_ decision: ChallengeDecision, file: StaticString = #filePath, line: UInt = #line) -> String {
        guard case .passThrough(let reason) = decision else {
            XCTFail("expected pass-through, got \(decision)", file: file, line: line)
            return ""
        }
        return reason
    }

    // MARK: Rule and scheme choice

    func testFirstRuleWhoseRealmMatchesIsUsed() {
        let subject = answerer([AuthRule(credentialName: "svc", schemes: [.digest], realm: "admin"),
                                AuthRule(credentialName: "token", schemes: [.bearer])])
        var exchange = AuthExchange()
        let digest = answer(subject.respondApplying(to: unauthorized(#"Digest realm="admin", nonce="n1", qop="auth""#), request: tls, target: origin, exchange: &exchange))
        XCTAssertEqual(digest?.scheme, .digest)
        XCTAssertEqual(digest?.headerName, "Authorization")
        XCTAssertTrue(digest?.value.text.hasPrefix(#"Digest username="svc", realm="admin""#) ?? false)

        var other = AuthExchange()
        let bearer = answer(subject.respondApplying(to: unauthorized(#"Bearer realm="api""#), request: tls, target: origin, exchange: &other))
        XCTAssertEqual(bearer?.value.text, "Bearer tkn")
    }

    /// The server's `rspauth` is checked on every answered response, preemptive ones too: a
    /// wrong proof (or one for another cnonce) is reported as such, a right one in capitals
    /// is the server's proof, and `nextnonce` is taken up by the session that comes back.
    func testServersDigestProofDecidesTheOutcome() throws {
        let store = ProtectionSpaceStore()
        let subject = answerer([AuthRule(credentialName: "svc", schemes: [.digest], realm: "admin")], store: store)
        let md5 = DigestAlgorithm.md5
        func rspauth(nc: String) -> String {
            md5.hex("\(md5.hex("svc:admin:pw")):n1:\(nc):cn:auth:\(md5.hex(":/x"))")
        }
        func info(_ value: String) -> AuthResponseHead { AuthResponseHead(status: 200, fields: [("Authentication-Info", value)]) }

        var first = AuthExchange()
        _ = answer(subject.respondApplying(to: unauthorized(#"Digest realm="admin", nonce="n1", qop="auth""#), request: tls, target: origin, exchange: &first))
        XCTAssertEqual(subject.completeApplying(response: info(#"rspauth="\#(rspauth(nc: "00000001").uppercased())", cnonce="cn", nc=00000001"#),
                                                target: origin, exchange: &first), .answered(.digest))

        var second = AuthExchange()
        XCTAssertNotNil(subject.preemptiveAnswer(request: tls, target: origin, exchange: &second))
        XCTAssertEqual(subject.completeApplying(response: info(#"rspauth="\#(rspauth(nc: "00000001"))", cnonce="cn", nc=00000002"#),
                                                target: origin, exchange: &second), .serverProofMismatch(.digest), "the proof of the first answer")

        var third = AuthExchange()
        XCTAssertNotNil(subject.preemptiveAnswer(request: tls, target: origin, exchange: &third))
        XCTAssertEqual(subject.completeApplying(response: info(#"rspauth="\#(rspauth(nc: "00000003"))", nextnonce="n2""#),
                                                target: origin, exchange: &third), .preemptive(.digest))
        var fourth = AuthExchange()
        XCTAssertTrue(subject.preemptiveAnswer(request: tls, target: origin, exchange: &fourth)?.value.text.contains(#"nonce="n2", nc=00000001"#) ?? false)
    }

    func testNoRuleForTheRealmPassesThrough() {
        let subject = answerer([AuthRule(credentialName: "svc", realm: "admin")])
        var exchange = AuthExchange()
        XCTAssertTrue(passReason(subject.respondApplying(to: unauthorized(#"Basic realm="other""#), request: tls, target: origin, exchange: &exchange)).contains("\"other\""))
    }

    func testSchemePreferenceFollowsTheRuleNotTheServer() {
        let offered = unauthorized(#"Basic realm="r""#, #"Digest realm="r", nonce="n", qop="auth""#)
        var exchange = AuthExchange()
        XCTAssertEqual(answer(answerer([AuthRule(credentialName: "svc", schemes: [.digest, .basic])])
            .respondApplying(to: offered, request: tls, target: origin, exchange: &exchange))?.scheme, .digest)
        exchange = AuthExchange()
        XCTAssertEqual(answer(answerer([AuthRule(credentialName: "svc", schemes: [.basic, .digest])])
            .respondApplying(to: offered, request: tls, target: origin, exchange: &exchange))?.scheme, .basic)
    }

    func testStrongestDigestAlgorithmIsChosenAmongSeveral() {
        var exchange = AuthExchange()
        let decision = answerer([AuthRule(credentialName: "svc")]).respondApplying(
            to: unauthorized(#"Digest realm="r", nonce="a", algorithm=MD5, qop="auth""#, #"Digest realm="r", nonce="b", algorithm=SHA-256, qop="auth""#),
            request: tls, target: origin, exchange: &exchange)
        XCTAssertTrue(answer(decision)?.value.text.contains("algorithm=SHA-256") ?? false)
    }

    func testUnknownSchemesAndUnanswerableCredentialsPassThrough() {
        var exchange = AuthExchange()
        _ = passReason(answerer([AuthRule(credentialName: "svc")]).respondApplying(to: unauthorized("Negotiate", "Mutual realm=\"x\""), request: tls, target: origin, exchange: &exchange))
        exchange = AuthExchange()
        let reason = passReason(answerer([AuthRule(credentialName: "token", schemes: [.basic])]).respondApplying(to: unauthorized(#"Basic realm="r""#), request: tls, target: origin, exchange: &exchange))
        XCTAssertTrue(reason.contains("cannot answer basic"), reason)
    }

    func testNotAChallengeAndUnreplayableBodyPassThrough() {
        let subject = answerer([AuthRule(credentialName: "svc")])
        var exchange = AuthExchange()
        _ = passReason(subject.respondApplying(to: ok, request: tls, target: origin, exchange: &exchange))
        let streamed = AuthRequest(method: "POST", target: "/", connectionIsTLS: true, bodyReplayable: false)
        XCTAssertTrue(passReason(subject.respondApplying(to: unauthorized(#"Basic realm="r""#), request: streamed, target: origin, exchange: &exchange)).contains("replay"))
    }

    func testMissingCredentialFailsTheExchange() {
        var exchange = AuthExchange()
        guard case .fail(let reason) = answerer([AuthRule(credentialName: "ghost")]).respondApplying(to: unauthorized(#"Basic realm="r""#), request: tls, target: origin, exchange: &exchange) else {
            return XCTFail("expected a failure")
        }
        XCTAssertTrue(reason.contains("ghost"))
    }

    // MARK: Plaintext

    func testPasswordEquivalentAnswersNeedTLSOrAllowPlaintext() {
        var exchange = AuthExchange()
        let basic = unauthorized(#"Basic realm="r""#)
        let refused = passReason(answerer([AuthRule(credentialName: "svc", schemes: [.basic])]).respondApplying(to: basic, request: plaintext, target: origin, exchange: &exchange))
        XCTAssertTrue(refused.contains("allow_plaintext"), refused)
        XCTAssertFalse(refused.contains("pw"))
        exchange = AuthExchange()
        _ = passReason(answerer([AuthRule(credentialName: "token")]).respondApplying(to: unauthorized("Bearer"), request: plaintext, target: origin, exchange: &exchange))
        exchange = AuthExchange()
        XCTAssertNotNil(answer(answerer([AuthRule(credentialName: "svc", schemes: [.basic], allowPlaintext: true)]).respondApplying(to: basic, request: plaintext, target: origin, exchange: &exchange)))
    }

    func testDigestIsAllowedOnPlaintextAndPreferredOverRefusedBasic() {
        var exchange = AuthExchange()
        let decision = answerer([AuthRule(credentialName: "svc", schemes: [.basic, .digest])]).respondApplying(
            to: unauthorized(#"Basic realm="r""#, #"Digest realm="r", nonce="n""#), request: plaintext, target: origin, exchange: &exchange)
        XCTAssertEqual(answer(decision)?.scheme, .digest)
    }

    // MARK: Failures, stale, nextnonce

    func testRejectedAnswerIsCountedAgainstMaxFailures() {
        let challenge = unauthorized(#"Basic realm="r""#)
        let once = answerer([AuthRule(credentialName: "svc", maxFailures: 1)])
        var exchange = AuthExchange()
        XCTAssertNotNil(answer(once.respondApplying(to: challenge, request: tls, target: origin, exchange: &exchange)))
        XCTAssertTrue(passReason(once.respondApplying(to: challenge, request: tls, target: origin, exchange: &exchange)).contains("max_failures 1"))
        XCTAssertEqual(once.completeApplying(response: challenge, target: origin, exchange: &exchange), .rejected(.basic))

        let twice = answerer([AuthRule(credentialName: "svc", maxFailures: 2)])
        exchange = AuthExchange()
        XCTAssertNotNil(answer(twice.respondApplying(to: challenge, request: tls, target: origin, exchange: &exchange)))
        XCTAssertNotNil(answer(twice.respondApplying(to: challenge, request: tls, target: origin, exchange: &exchange)))
        _ = passReason(twice.respondApplying(to: challenge, request: tls, target: origin, exchange: &exchange))
    }

    func testStaleNonceIsAnsweredWithTheNewNonceWithoutCounting() {
        let subject = answerer([AuthRule(credentialName: "svc", maxFailures: 1)])
        var exchange = AuthExchange()
        _ = answer(subject.respondApplying(to: unauthorized(#"Digest realm="r", nonce="old", qop="auth""#), request: tls, target: origin, exchange: &exchange))
        let retry = answer(subject.respondApplying(to: unauthorized(#"Digest realm="r", nonce="new", qop="auth", stale=true"#), request: tls, target: origin, exchange: &exchange))
        XCTAssertTrue(retry?.value.text.contains(#"nonce="new""#) ?? false)
        XCTAssertTrue(retry?.value.text.contains("nc=00000001") ?? false)
        _ = passReason(subject.respondApplying(to: unauthorized(#"Digest realm="r", nonce="newer", qop="auth""#), request: tls, target: origin, exchange: &exchange))
    }

    func testParallelExchangesAnsweringOneNonceShareItsCount() {
        // Servers hand one nonce to parallel connections; each answer must carry a new count.
        let store = ProtectionSpaceStore()
        let subject = answerer([AuthRule(credentialName: "svc")], store: store)
        let challenge = unauthorized(#"Digest realm="r", nonce="shared", qop="auth""#)
        var first = AuthExchange()
        XCTAssertTrue(answer(subject.respondApplying(to: challenge, request: tls, target: origin, exchange: &first))?.value.text.contains("nc=00000001") ?? false)
        XCTAssertEqual(subject.completeApplying(response: ok, target: origin, exchange: &first), .answered(.digest))
        var second = AuthExchange(), third = AuthExchange()
        let two = answer(subject.respondApplying(to: challenge, request: tls, target: origin, exchange: &second))
        let three = answer(subject.respondApplying(to: challenge, request: tls, target: origin, exchange: &third))
        XCTAssertTrue(two?.value.text.contains("nc=00000002") ?? false, two?.value.text ?? "")
        XCTAssertTrue(three?.value.text.contains("nc=00000003") ?? false, three?.value.text ?? "")
        // The exchange that counted earlier finishing last does not wind the count back.
        _ = subject.completeApplying(response: ok, target: origin, exchange: &third)
        _ = subject.completeApplying(response: ok, target: origin, exchange: &second)
        var fourth = AuthExchange()
        XCTAssertTrue(subject.preemptiveAnswer(request: tls, target: origin, exchange: &fourth)?.value.text.contains("nc=00000004") ?? false)
    }

    func testDigestSessionIsLentToOneExchangeAtATime() {
        // Apache with AuthDigestNcCheck wants each nonce's counts in order: an exchange
        // holding the session keeps it until its answer is in, so a concurrent one goes bare.
        let subject = answerer([AuthRule(credentialName: "svc")])
        var first = AuthExchange()
        _ = answer(subject.respondApplying(to: unauthorized(#"Digest realm="r", nonce="n1", qop="auth""#), request: tls, target: origin, exchange: &first))
        _ = subject.completeApplying(response: ok, target: origin, exchange: &first)

        var holder = AuthExchange(), concurrent = AuthExchange()
        XCTAssertTrue(subject.preemptiveAnswer(request: tls, target: origin, exchange: &holder)?.value.text.contains("nc=00000002") ?? false)
        XCTAssertNil(subject.preemptiveAnswer(request: tls, target: origin, exchange: &concurrent), "the only session is lent out")
        let own = answer(subject.respondApplying(to: unauthorized(#"Digest realm="r", nonce="n2", qop="auth""#), request: tls, target: origin, exchange: &concurrent))
        XCTAssertTrue(own?.value.text.contains(#"nonce="n2", nc=00000001"#) ?? false, own?.value.text ?? "")
        _ = subject.completeApplying(response: ok, target: origin, exchange: &concurrent)
        _ = subject.completeApplying(response: ok, target: origin, exchange: &holder)

        var a = AuthExchange(), b = AuthExchange(), c = AuthExchange()
        let answers = [subject.preemptiveAnswer(request: tls, target: origin, exchange: &a),
                       subject.preemptiveAnswer(request: tls, target: origin, exchange: &b)].compactMap { $0?.value.text }
        XCTAssertEqual(answers.count, 2, "both sessions came back")
        XCTAssertTrue(answers.contains { $0.contains(#"nonce="n1", nc=00000003"#) }, "\(answers)")
        XCTAssertTrue(answers.contains { $0.contains(#"nonce="n2", nc=00000002"#) }, "\(answers)")
        XCTAssertNil(subject.preemptiveAnswer(request: tls, target: origin, exchange: &c))
        // A session whose answer was rejected is not lent again.
        XCTAssertEqual(subject.completeApplying(response: unauthorized(#"Digest realm="r", nonce="n3", qop="auth""#), target: origin, exchange: &a), .rejected(.digest))
        _ = subject.completeApplying(response: ok, target: origin, exchange: &b)
        var d = AuthExchange(), e = AuthExchange()
        XCTAssertNotNil(subject.preemptiveAnswer(request: tls, target: origin, exchange: &d))
        XCTAssertNil(subject.preemptiveAnswer(request: tls, target: origin, exchange: &e))
    }

    /// A session lent to the preemptive candidate counts on across the store's blocks of
    /// counts, and on the same shelf when the plan is made again (something else was learned):
    /// no fresh challenge, no gap (Apache's nc check). A fresh answer with the same nonce
    /// meanwhile gets a count past the block, and the shelved session goes on past that one.
    func testShelvedDigestSessionCountsOnAcrossBlocksAndPlansAndPastAFreshAnswer() {
        let store = ProtectionSpaceStore()
        let subject = answerer([AuthRule(credentialName: "svc")], store: store)
        let nonce = #"Digest realm="r", nonce="n1", qop="auth""#
        func preemptive(_ expected: UInt32, file: StaticString = #filePath, line: UInt = #line) {
            var exchange = AuthExchange()
            let text = subject.preemptiveAnswer(request: tls, target: origin, exchange: &exchange)?.value.text ?? "none"
            XCTAssertTrue(text.contains(#"nonce="n1", nc=\#(DigestResponder.formatNonceCount(expected))"#), text, file: file, line: line)
            XCTAssertEqual(subject.completeApplying(response: ok, target: origin, exchange: &exchange), .preemptive(.digest), file: file, line: line)
        }
        func learnElsewhere() {
            var exchange = AuthExchange()
            let elsewhere = AuthTarget(host: "other.example.com", port: 443)
            _ = answer(subject.respondApplying(to: unauthorized(#"Digest realm="o", nonce="o1", qop="auth""#), request: tls, target: elsewhere, exchange: &exchange))
            XCTAssertEqual(subject.completeApplying(response: ok, target: elsewhere, exchange: &exchange), .answered(.digest))
        }
        var first = AuthExchange()
        _ = answer(subject.respondApplying(to: unauthorized(nonce), request: tls, target: origin, exchange: &first))
        XCTAssertEqual(subject.completeApplying(response: ok, target: origin, exchange: &first), .answered(.digest))
        let last = 2 * DigestSessionShelf.countsPerReservation + 6
        for count in 2...last { preemptive(count) }
        learnElsewhere()
        preemptive(last + 1)

        // The shelf holds counts up to the end of its third block; a fresh answer to the same nonce goes past them.
        var fresh = AuthExchange()
        let freshText = answer(subject.respondApplying(to: unauthorized(nonce), request: tls, target: origin, exchange: &fresh))?.value.text ?? ""
        let beyond = 1 + 3 * DigestSessionShelf.countsPerReservation + 1
        XCTAssertTrue(freshText.contains("nc=\(DigestResponder.formatNonceCount(beyond))"), freshText)
        XCTAssertEqual(subject.completeApplying(response: ok, target: origin, exchange: &fresh), .answered(.digest))
        preemptive(beyond + 1)
    }

    func testEndlessStaleNoncesStopAfterOneUncountedRetry() {
        // A server that answers stale=true for ever must not draw a burst of requests.
        let subject = answerer([AuthRule(credentialName: "svc", maxFailures: 1)])
        var exchange = AuthExchange()
        XCTAssertNotNil(answer(subject.respondApplying(to: unauthorized(#"Digest realm="r", nonce="n0", qop="auth""#), request: tls, target: origin, exchange: &exchange)))
        XCTAssertNotNil(answer(subject.respondApplying(to: unauthorized(#"Digest realm="r", nonce="n1", qop="auth", stale=true"#), request: tls, target: origin, exchange: &exchange)))
        let third = subject.respondApplying(to: unauthorized(#"Digest realm="r", nonce="n2", qop="auth", stale=true"#), request: tls, target: origin, exchange: &exchange)
        XCTAssertTrue(passReason(third).contains("max_failures 1"), "\(third)")
    }

    func testPreemptiveDigestUsesCachedNonceNextCountAndNextNonce() {
        let store = ProtectionSpaceStore()
        let subject = answerer([AuthRule(credentialName: "svc")], store: store)
        var first = AuthExchange()
        XCTAssertNil(subject.preemptiveAnswer(request: tls, target: origin, exchange: &first))
        _ = answer(subject.respondApplying(to: unauthorized(#"Digest realm="r", nonce="n1", qop="auth", opaque="o""#), request: tls, target: origin, exchange: &first))
        XCTAssertEqual(subject.completeApplying(response: ok, target: origin, exchange: &first), .answered(.digest))

        var second = AuthExchange()
        let preemptive = subject.preemptiveAnswer(request: tls, target: origin, exchange: &second)
        XCTAssertEqual(preemptive?.scheme, .digest)
        XCTAssertTrue(preemptive?.value.text.contains(#"nonce="n1""#) ?? false)
        XCTAssertTrue(preemptive?.value.text.contains("nc=00000002") ?? false)
        XCTAssertTrue(preemptive?.value.text.contains(#"opaque="o""#) ?? false)
        let withNextNonce = AuthResponseHead(status: 200, fields: [("Authentication-Info", #"nextnonce="n2""#)])
        XCTAssertEqual(subject.completeApplying(response: withNextNonce, target: origin, exchange: &second), .preemptive(.digest))

        var third = AuthExchange()
        let afterNext = subject.preemptiveAnswer(request: tls, target: origin, exchange: &third)
        XCTAssertTrue(afterNext?.value.text.contains(#"nonce="n2""#) ?? false)
        XCTAssertTrue(afterNext?.value.text.contains("nc=00000001") ?? false)
    }

    func testRejectedPreemptiveAnswerIsAnsweredAfreshNotCounted() {
        let store = ProtectionSpaceStore()
        let subject = answerer([AuthRule(credentialName: "svc", schemes: [.basic], maxFailures: 1)], store: store)
        var learn = AuthExchange()
        _ = answer(subject.respondApplying(to: unauthorized(#"Basic realm="r""#), request: tls, target: origin, exchange: &learn))
        _ = subject.completeApplying(response: ok, target: origin, exchange: &learn)

        var exchange = AuthExchange()
        XCTAssertNotNil(subject.preemptiveAnswer(request: tls, target: origin, exchange: &exchange))
        XCTAssertNotNil(answer(subject.respondApplying(to: unauthorized(#"Basic realm="r""#), request: tls, target: origin, exchange: &exchange)),
                        "a stale preemptive answer does not use up max_failures")
        XCTAssertFalse(store.entries(for: origin).isEmpty, "kept until the fresh answer tells whether the credential was refused")
    }

    // MARK: Persistence

    func testPreemptiveBasicAndBearerAfterSuccessOnlyWithSessionPersistence() {
        for (persistence, expectPreemptive) in [(Persistence.session, true), (.permanent, true), (.none, false)] {
            let subject = answerer([AuthRule(credentialName: "svc", schemes: [.basic], persistence: persistence)])
            var exchange = AuthExchange()
            _ = answer(subject.respondApplying(to: unauthorized(#"Basic realm="r""#), request: tls, target: origin, exchange: &exchange))
            _ = subject.completeApplying(response: ok, target: origin, exchange: &exchange)
            var next = AuthExchange()
            let preemptive = subject.preemptiveAnswer(request: tls, target: origin, exchange: &next)
            XCTAssertEqual(preemptive != nil, expectPreemptive, "\(persistence)")
            if expectPreemptive { XCTAssertEqual(preemptive?.value.text, "Basic c3ZjOnB3") }
        }
        let noPreemptive = answerer([AuthRule(credentialName: "token", persistence: .session, preemptive: false)])
        var exchange = AuthExchange()
        _ = answer(noPreemptive.respondApplying(to: unauthorized("Bearer"), request: tls, target: origin, exchange: &exchange))
        _ = noPreemptive.completeApplying(response: ok, target: origin, exchange: &exchange)
        var next = AuthExchange()
        XCTAssertNil(noPreemptive.preemptiveAnswer(request: tls, target: origin, exchange: &next))
    }

    /// The preemptive choice is decided once and kept, but never past a change to what was
    /// learned: a space forgotten or locked out is not answered on the next request, by this
    /// answerer or a copy of it (each exchange holds one), and one learned again is.
    func testPreemptiveAnswerFollowsTheStoreAsItChanges() {
        let store = ProtectionSpaceStore()
        let subject = answerer([AuthRule(credentialName: "svc", schemes: [.basic])], store: store)
        let space = ProtectionSpace(target: origin, scheme: .basic, realm: "r")
        func learn() {
            var exchange = AuthExchange()
            _ = answer(subject.respondApplying(to: unauthorized(#"Basic realm="r""#), request: tls, target: origin, exchange: &exchange))
            _ = subject.completeApplying(response: ok, target: origin, exchange: &exchange)
        }
        func preemptive(_ answerer: ChallengeAnswerer) -> String? {
            var exchange = AuthExchange()
            return answerer.preemptiveAnswer(request: tls, target: origin, exchange: &exchange)?.value.text
        }
        learn()
        let copy = subject
        XCTAssertEqual(preemptive(subject), "Basic c3ZjOnB3")
        store.forget(space)
        XCTAssertNil(preemptive(subject))
        XCTAssertNil(preemptive(copy))
        learn()
        XCTAssertEqual(preemptive(copy), "Basic c3ZjOnB3")
        _ = store.refuse(space, on: ResourceKey(tls), credentialName: "svc", at: Date())
        XCTAssertTrue(store.isLockedOut(space))
        XCTAssertNil(preemptive(subject))
        XCTAssertNil(preemptive(copy))
    }

    func testPreemptiveNeverCrossesPlaintextForPasswordEquivalents() {
        let subject = answerer([AuthRule(credentialName: "svc", schemes: [.basic])])
        var exchange = AuthExchange()
        _ = answer(subject.respondApplying(to: unauthorized(#"Basic realm="r""#), request: tls, target: origin, exchange: &exchange))
        _ = subject.completeApplying(response: ok, target: origin, exchange: &exchange)
        var next = AuthExchange()
        XCTAssertNil(subject.preemptiveAnswer(request: plaintext, target: origin, exchange: &next))
    }

    func testPermanentStateExportsWithoutSecretsAndImports() throws {
        let store = ProtectionSpaceStore()
        let subject = answerer([AuthRule(credentialName: "svc", realm: "perm", persistence: .permanent),
                                AuthRule(credentialName: "svc", realm: "sess", persistence: .session)], store: store)
        for realm in ["perm", "sess"] {
            var exchange = AuthExchange()
            _ = answer(subject.respondApplying(to: unauthorized(#"Digest realm="\#(realm)", nonce="N-\#(realm)", qop="auth""#), request: tls, target: origin, exchange: &exchange))
            _ = subject.completeApplying(response: ok, target: origin, exchange: &exchange)
        }
        let client = OAuth2Client(tokenURL: "https://idp.test/token", clientID: "app", clientSecret: "client-secret", scope: "read")
        let token = OAuth2Token(accessToken: "at-1", obtainedAt: Date(timeIntervalSince1970: 1000), expiresAt: Date(timeIntervalSince1970: 4600))
        let file = AuthStateFile(spaces: store.permanentEntries(), tokens: [SavedToken(credentialName: "idp", client: client, token: token)])
        let json = String(decoding: try file.encoded(), as: UTF8.self)
        XCTAssertTrue(json.contains("N-perm"))
        XCTAssertFalse(json.contains("N-sess"), "session state stays in memory")
        XCTAssertFalse(json.contains("pw"), "no password in the persisted state")
        XCTAssertFalse(json.contains("client-secret"), "no client secret in the persisted state")

        let reread = try AuthStateFile.decode(Data(json.utf8))
        XCTAssertEqual(reread.tokens.first?.token, token, "the token and its expiry survive")
        XCTAssertTrue(reread.tokens.first?.wasIssued(to: client) ?? false)
        var otherScope = client
        otherScope.scope = "write"
        XCTAssertFalse(reread.tokens.first?.wasIssued(to: otherScope) ?? true, "a token is not reused for another scope")

        let restored = ProtectionSpaceStore()
        restored.restore(reread.spaces)
        var exchange = AuthExchange()
        let preemptive = answerer(subject.rules, store: restored).preemptiveAnswer(request: tls, target: origin, exchange: &exchange)
        XCTAssertTrue(preemptive?.value.text.contains("nc=00000002") ?? false)
        XCTAssertThrowsError(try AuthStateFile.decode(Data("{".utf8)))
        XCTAssertThrowsError(try AuthStateFile.decode(Data(#"{"version": 2, "spaces": []}"#.utf8)))
        XCTAssertEqual(try AuthStateFile.decode(Data(#"{"version": 1, "spaces": []}"#.utf8)).tokens, [],
                       "a file from before tokens were kept still reads")
    }

    // MARK: Proxy, NTLM, OAuth2

    func testParentProxyChallengeIsAnsweredWithProxyAuthorization() {
        let proxy = AuthTarget(host: "proxy.corp", port: 8080, isProxy: true)
        var exchange = AuthExchange()
        let decision = answerer([AuthRule(credentialName: "svc", schemes: [.digest])]).respondApplying(
            to: unauthorized(#"Digest realm="squid", nonce="n""#, status: 407), request: plaintext, target: proxy, exchange: &exchange)
        XCTAssertEqual(answer(decision)?.headerName, "Proxy-Authorization")
        // A 401 is not the parent proxy's challenge.
        _ = passReason(answerer([AuthRule(credentialName: "svc")]).respondApplying(to: unauthorized(#"Basic realm="x""#), request: tls, target: proxy, exchange: &exchange))
    }

    func testNTLMHandshakeLegsOnOneConnection() throws {
        var subject = answerer([AuthRule(credentialName: "corp", schemes: [.ntlm])])
        subject.ntlmEntropy = NTLMEntropy(clientChallenge: { [UInt8](repeating: 1, count: 8) },
                                          randomSessionKey: { [UInt8](repeating: 2, count: 16) }, now: { 0 })
        var exchange = AuthExchange()
        let first = answer(subject.respondApplying(to: unauthorized("NTLM", #"Basic realm="r""#), request: tls, target: origin, exchange: &exchange))
        XCTAssertEqual(first?.isHandshakeLeg, true)
        XCTAssertEqual(first?.bindsConnection, true)
        XCTAssertTrue(first?.value.text.hasPrefix("NTLM TlRMTVNTUAABAAAA") ?? false)
        XCTAssertEqual(exchange.ntlm?.state, .negotiateSent)

        let type2 = "4e544c4d53535000020000000c000c003800000033828ae20123456789abcdef00000000000000002400240044000000060070170000000f53006500720076006500720002000c0044006f006d00610069006e0001000c0053006500720076006500720000000000"
        let third = answer(subject.respondApplying(to: unauthorized("NTLM " + Base64.encode(Hex.decode(type2)!)), request: tls, target: origin, exchange: &exchange))
        XCTAssertEqual(third?.isHandshakeLeg, false, "the authenticate leg carries the request body")
        let message = ParsedAuthenticate(Base64.decode(String(third!.value.text.dropFirst(5)))!)
        XCTAssertEqual(message.string(at: 28), "CORP")
        XCTAssertEqual(message.string(at: 36), "svc")
        XCTAssertEqual(message.string(at: 44), "APPHOST")

        _ = passReason(subject.respondApplying(to: unauthorized("NTLM"), request: tls, target: origin, exchange: &exchange))
        XCTAssertEqual(subject.completeApplying(response: ok, target: origin, exchange: &exchange), .answered(.ntlm))
        var next = AuthExchange()
        XCTAssertNil(subject.preemptiveAnswer(request: tls, target: origin, exchange: &next), "NTLM belongs to the connection")
    }

    func testOAuth2FetchesATokenThenAnswersAndRefetchesOnceOnRejection() {
        let client = OAuth2Client(tokenURL: "https://idp/t", clientID: "app", clientSecret: "s")
        let now = Date(timeIntervalSince1970: 1000)
        var subject = answerer([AuthRule(credentialName: "idp")])
        subject.clock = { now }
        subject.credentials["idp"] = .oauth2(client, token: nil)
        let challenge = unauthorized(#"Bearer realm="api""#)
        var exchange = AuthExchange()
        guard case .fetchToken(let name, _) = subject.respondApplying(to: challenge, request: tls, target: origin, exchange: &exchange) else {
            return XCTFail("expected a token fetch")
        }
        XCTAssertEqual(name, "idp")

        subject.credentials["idp"] = .oauth2(client, token: OAuth2Token(accessToken: "first", obtainedAt: now, expiresAt: now.addingTimeInterval(3600)))
        XCTAssertEqual(answer(subject.respondApplying(to: challenge, request: tls, target: origin, exchange: &exchange))?.value.text, "Bearer first")
        guard case .fetchToken = subject.respondApplying(to: challenge, request: tls, target: origin, exchange: &exchange) else {
            return XCTFail("a rejected token is fetched anew once")
        }
        subject.credentials["idp"] = .oauth2(client, token: OAuth2Token(accessToken: "second", obtainedAt: now, expiresAt: now.addingTimeInterval(3600)))
        XCTAssertEqual(answer(subject.respondApplying(to: challenge, request: tls, target: origin, exchange: &exchange))?.value.text, "Bearer second")
        _ = passReason(subject.respondApplying(to: challenge, request: tls, target: origin, exchange: &exchange))
    }

    func testExpiredOAuth2TokenIsNeverSent() {
        let client = OAuth2Client(tokenURL: "https://idp/t", clientID: "app", clientSecret: "s")
        let now = Date(timeIntervalSince1970: 1000)
        var subject = answerer([AuthRule(credentialName: "idp")])
        subject.clock = { now }
        subject.credentials["idp"] = .oauth2(client, token: OAuth2Token(accessToken: "old", obtainedAt: now.addingTimeInterval(-100), expiresAt: now))
        var exchange = AuthExchange()
        guard case .fetchToken = subject.respondApplying(to: unauthorized("Bearer"), request: tls, target: origin, exchange: &exchange) else {
            return XCTFail("an expired token must be replaced, not sent")
        }
    }
}
