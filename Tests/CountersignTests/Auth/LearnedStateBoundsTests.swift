import FoundationEssentials
import XCTest
@testable import CountersignAuth

/// What a server chooses and the proxy keeps is bounded (issue 19 item 5): nonce, opaque and
/// realm lengths, counts only for live sessions, and all learned state per host in bytes.
final class LearnedStateBoundsTests: XCTestCase {
    let origin = AuthTarget(host: "api.example.com", port: 443)
    let tls = AuthRequest(method: "GET", target: "/x", connectionIsTLS: true)

    func answerer(store: ProtectionSpaceStore = ProtectionSpaceStore()) -> ChallengeAnswerer {
        ChallengeAnswerer(rules: [AuthRule(credentialName: "svc", schemes: [.digest, .basic], allowPlaintext: true)],
                          credentials: ["svc": .password(user: "svc", password: "pw", workstation: nil)], store: store)
    }

    func challenge(_ value: String) -> AuthResponseHead { AuthResponseHead(status: 401, fields: [("WWW-Authenticate", value)]) }

    func testOverlongNonceOpaqueOrRealmIsNotAnswered() {
        let long = String(repeating: "n", count: DigestChallenge.maxNonceBytes + 1)
        let realm = String(repeating: "r", count: ProtectionSpace.maxRealmBytes + 1)
        for value in [#"Digest realm="r", nonce="\#(long)", qop="auth""#,
                      #"Digest realm="r", nonce="n", opaque="\#(long)", qop="auth""#,
                      #"Digest realm="\#(realm)", nonce="n", qop="auth""#,
                      #"Basic realm="\#(realm)""#] {
            var exchange = AuthExchange()
            guard case .passThrough(let reason) = answerer().respond(to: challenge(value), request: tls, target: origin, exchange: &exchange).result else {
                return XCTFail("answered \(value.prefix(40))")
            }
            XCTAssertTrue(reason.contains("Countersign accepts; not answered"), reason)
        }
        var exchange = AuthExchange()
        let fits = String(repeating: "n", count: DigestChallenge.maxNonceBytes)
        guard case .answer = answerer().respond(to: challenge(#"Digest realm="r", nonce="\#(fits)", qop="auth""#), request: tls,
                                                target: origin, exchange: &exchange).result else { return XCTFail("a nonce at the cap is answered") }
    }

    func testOverlongNextnonceIsNotAdopted() {
        var session = DigestSession(realm: "r", nonce: "n1", nonceCount: 3)
        XCTAssertFalse(session.adopt(nextNonce: String(repeating: "x", count: DigestChallenge.maxNonceBytes + 1)))
        XCTAssertEqual(session.nonce, "n1")
        XCTAssertEqual(session.nonceCount, 3)
        XCTAssertTrue(session.adopt(nextNonce: "n2"))
        XCTAssertEqual(session.nonce, "n2")
    }

    /// A session's size is counted when its fields change (not on each return to the store):
    /// after any change it measures what a session made with those fields measures, and a
    /// change to a copy leaves the original's measure as it was.
    func testSessionMeasureFollowsEachChangeOfItsOwn() {
        let made = DigestSession(realm: "r", nonce: "abc")
        var session = made
        XCTAssertTrue(session.adopt(nextNonce: "abcdefgh"))
        session.opaque = "12345"
        session.qopOptions = ["auth", "auth-int"]
        XCTAssertEqual(ProtectionSpaceStore.cost(session),
                       ProtectionSpaceStore.cost(DigestSession(realm: "r", nonce: "abcdefgh", opaque: "12345", qopOptions: ["auth", "auth-int"])))
        XCTAssertEqual(ProtectionSpaceStore.cost(session), ProtectionSpaceStore.cost(made) + 5 + 5 + 16 + 8)
        XCTAssertEqual(ProtectionSpaceStore.cost(made), ProtectionSpaceStore.cost(DigestSession(realm: "r", nonce: "abc")))

        // What an answer keeps in the session (its fixed parts, the last H(A2)) is counted too.
        var answered = made
        _ = try? DigestResponder().authorize(session: &answered, user: "u", password: "p", request: DigestRequest(method: "GET", uri: "/long/path"))
        XCTAssertNotNil(answered.answerParts)
        XCTAssertEqual(ProtectionSpaceStore.cost(answered),
                       ProtectionSpaceStore.cost(made) + answered.answerParts!.byteCount + 160 + "/long/path".utf8.count)
    }

    func testCountsAreKeptForLiveSessionsOnly() {
        let store = ProtectionSpaceStore()
        let subject = answerer(store: store)
        let space = ProtectionSpace(target: origin, scheme: .digest, realm: "r")
        var exchange = AuthExchange()
        _ = subject.respondApplying(to: challenge(#"Digest realm="r", nonce="first", qop="auth""#), request: tls, target: origin, exchange: &exchange)
        for index in 0..<500 {
            let ok = AuthResponseHead(status: 200, fields: [("Authentication-Info", #"nextnonce="next-\#(index)-\#(String(repeating: "z", count: 900))""#)])
            XCTAssertNotEqual(subject.completeApplying(response: ok, target: origin, exchange: &exchange), .notAttempted)
            exchange = AuthExchange()
            XCTAssertNotNil(subject.preemptiveAnswer(request: tls, target: origin, exchange: &exchange))
        }
        XCTAssertLessThan(store.learnedBytes(for: origin), 8 * 1024,
                          "500 nextnonces of ~1 KB: only the live session's nonce is kept, \(store.learnedBytes(for: origin)) bytes")
        XCTAssertNotNil(store.entry(for: space))
    }

    func testLearnedStatePerHostIsBoundedInBytes() {
        let store = ProtectionSpaceStore()
        let nonce = String(repeating: "n", count: DigestChallenge.maxNonceBytes)
        for index in 0..<400 {
            let space = ProtectionSpace(target: origin, scheme: .digest, realm: "realm-\(index)")
            let session = DigestSession(realm: "realm-\(index)", nonce: "\(index)" + nonce.dropFirst(4), opaque: nonce, nonceCount: 1)
            store.learn(LearnedSpace(space: space, credentialName: "svc", persistence: .session, digest: session,
                                     learnedAt: Date(timeIntervalSince1970: Double(index))))
            for copy in 0..<8 {
                var other = session
                other.nonce = "\(index)-\(copy)" + nonce.dropFirst(8)
                store.returnDigestSession(other, to: space)
            }
            XCTAssertLessThanOrEqual(store.learnedBytes(for: origin), ProtectionSpaceStore.maxBytesPerTarget)
        }
        let newest = ProtectionSpace(target: origin, scheme: .digest, realm: "realm-399")
        XCTAssertNotNil(store.entry(for: newest), "the space just learned stays; older ones made room")
        XCTAssertNotNil(store.leaseDigestSession(newest))
        let elsewhere = AuthTarget(host: "other.example.com", port: 443)
        XCTAssertEqual(store.learnedBytes(for: elsewhere), 0, "each host has its own budget")
    }
}
