import FoundationEssentials
import XCTest
@testable import CountersignAuth
import CountersignSupport

/// Answers prepared once per configuration snapshot are the answers computed per request,
/// follow a changed password, and never show the secret when printed.
final class PreparedCredentialTests: XCTestCase {
    let origin = AuthTarget(host: "www.example.org", port: 443)
    let tls = AuthRequest(method: "GET", target: "/dir/index.html", connectionIsTLS: true)
    let mufasa = CredentialMaterial.password(user: "Mufasa", password: "Circle of Life", workstation: nil)
    let rfcChallenge = #"Digest realm="http-auth@example.org", qop="auth", algorithm=MD5, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#
    let rfcCnonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"

    private func respond(_ answerer: ChallengeAnswerer, _ challenge: String) -> String? {
        var exchange = AuthExchange()
        let head = AuthResponseHead(status: 401, fields: [("WWW-Authenticate", challenge)])
        guard case .answer(let answer) = answerer.respondApplying(to: head, request: tls, target: origin, exchange: &exchange) else { return nil }
        return answer.value.text
    }

    private func answerer(_ credentials: [String: CredentialMaterial], prepared: PreparedCredentials? = nil) -> ChallengeAnswerer {
        var answerer = ChallengeAnswerer(rules: [AuthRule(credentialName: "c")], credentials: credentials,
                                         store: ProtectionSpaceStore(), prepared: prepared)
        answerer.digestResponder = DigestResponder(clientNonce: { [rfcCnonce] in rfcCnonce })
        return answerer
    }

    func testPreparedBasicAndBearerEqualTheComputedValues() throws {
        let basic = PreparedCredential(.password(user: "Aladdin", password: "open sesame", workstation: nil))
        XCTAssertEqual(try basic.basic?.get().text, try BasicAnswer.authorization(user: "Aladdin", password: "open sesame"))
        XCTAssertEqual(try basic.basic?.get().text, "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")  // RFC 7617 §2
        XCTAssertNil(basic.bearer)
        let bearer = PreparedCredential(.token("mF_9.B5f-4.1JqM"))
        XCTAssertEqual(try bearer.bearer?.get().text, "Bearer mF_9.B5f-4.1JqM")
        // A credential Basic cannot carry fails exactly as the per-request computation does.
        let colon = PreparedCredential(.password(user: "a:b", password: "p", workstation: nil))
        XCTAssertThrowsError(try BasicAnswer.authorization(user: "a:b", password: "p")) { error in
            guard case .failure(let prepared)? = colon.basic else { return XCTFail("prepared a Basic value for a user-id with ':'") }
            XCTAssertEqual(prepared, error as? AuthError)
        }
        // Through the answerer: the prepared values are what goes on the wire.
        XCTAssertEqual(respond(answerer(["c": .password(user: "Aladdin", password: "open sesame", workstation: nil)]), #"Basic realm="r""#),
                       "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
        XCTAssertEqual(respond(answerer(["c": .token("mF_9.B5f-4.1JqM")]), #"Bearer realm="r""#), "Bearer mF_9.B5f-4.1JqM")
    }

    /// The answer computed per request from the password, with the nc the answerer used.
    private func computed(_ challenge: String, answer: String?, password: String = "Circle of Life") throws -> String {
        let nc = try XCTUnwrap(answer?.components(separatedBy: "nc=").last?.prefix(8))
        var session = DigestSession(challenge: try DigestChallenge(ChallengeParser.parse(fieldValue: challenge)[0]))
        session.nonceCount = try XCTUnwrap(UInt32(nc, radix: 16)) - 1
        return try DigestResponder(clientNonce: { [rfcCnonce] in rfcCnonce }).authorize(
            session: &session, user: "Mufasa", password: password, request: DigestRequest(method: "GET", uri: "/dir/index.html")).value.text
    }

    /// RFC 7616 §3.9.1 through the answerer, then again: the later answers use the cached
    /// H(user:realm:password) and equal the ones computed from the password.
    func testDigestSecretIsCachedPerProtectionSpaceAndMatchesRFC7616() throws {
        let prepared = PreparedCredentials(["c": mufasa])
        let subject = answerer(["c": mufasa], prepared: prepared)
        let first = respond(subject, rfcChallenge)
        XCTAssertTrue(first?.contains(#"nc=00000001, cnonce="\#(rfcCnonce)", qop=auth, response="8ca523f5e9506fed4657c9700eebdbec""#) ?? false, first ?? "no answer")
        let second = respond(subject, rfcChallenge)
        XCTAssertEqual(second, try computed(rfcChallenge, answer: second))
        let cache = try XCTUnwrap(prepared.prepared("c", for: mufasa))
        XCTAssertEqual(cache.digestComputations, 1)
        // Another realm is another protection space: its own secret.
        let otherRealm = rfcChallenge.replacingOccurrences(of: "http-auth@example.org", with: "other")
        let other = respond(subject, otherRealm)
        XCTAssertEqual(other, try computed(otherRealm, answer: other))
        XCTAssertEqual(cache.digestComputations, 2)
        // -sess still hashes the nonces in per answer, from the cached secret.
        let sessChallenge = rfcChallenge.replacingOccurrences(of: "algorithm=MD5", with: "algorithm=MD5-sess")
        let sess = respond(subject, sessChallenge)
        XCTAssertEqual(sess, try computed(sessChallenge, answer: sess))
        XCTAssertEqual(cache.digestComputations, 2)
    }

    /// A reload builds new prepared values from the new password; and material that no longer
    /// matches what was prepared is never answered with the old value.
    func testNewPasswordChangesThePreparedValue() {
        let old = CredentialMaterial.password(user: "u", password: "old", workstation: nil)
        let new = CredentialMaterial.password(user: "u", password: "new", workstation: nil)
        let before = PreparedCredentials(["c": old]), after = PreparedCredentials(["c": new])
        XCTAssertNotEqual(try before.prepared("c", for: old)?.basic?.get(), try after.prepared("c", for: new)?.basic?.get())
        XCTAssertEqual(respond(answerer(["c": new], prepared: after), #"Basic realm="r""#), "Basic " + Base64.encode(Array("u:new".utf8)))
        XCTAssertNil(before.prepared("c", for: new))
        XCTAssertEqual(respond(answerer(["c": new], prepared: before), #"Basic realm="r""#), "Basic " + Base64.encode(Array("u:new".utf8)))
        let digestOld = respond(answerer(["c": old], prepared: before), rfcChallenge)
        let digestNew = respond(answerer(["c": new], prepared: before), rfcChallenge)
        XCTAssertNotNil(digestOld)
        XCTAssertNotEqual(digestOld, digestNew)
        XCTAssertEqual(digestNew, respond(answerer(["c": new], prepared: after), rfcChallenge))
    }

    func testPrintingNeverShowsTheSecret() throws {
        let password = "Circle of Life"
        let prepared = PreparedCredentials(["c": mufasa, "t": .token("tok3n-secret")])
        let credential = try XCTUnwrap(prepared.prepared("c", for: mufasa))
        _ = credential.digestSecret(DigestAlgorithm(hash: .md5, isSession: false), realm: "r")
        let value = try XCTUnwrap(credential.basic?.get())
        let token = try XCTUnwrap(prepared.prepared("t", for: .token("tok3n-secret"))?.bearer?.get())
        let secrets = [password, Base64.encode(Array("Mufasa:\(password)".utf8)), "tok3n-secret",
                       DigestAlgorithm(hash: .md5, isSession: false).hex("Mufasa:r:\(password)")]
        var dumped = ""
        dump(prepared, to: &dumped); dump(credential, to: &dumped); dump(value, to: &dumped); dump(token, to: &dumped)
        let printed = [String(describing: value), "\(value)", String(reflecting: value), "\(token)", String(reflecting: token),
                       "\(credential)", String(reflecting: credential), "\(prepared)", String(reflecting: prepared), dumped]
        for text in printed {
            for secret in secrets { XCTAssertFalse(text.contains(secret), "\(text) shows a secret") }
        }
        XCTAssertEqual("\(value)", "<redacted>")
    }
}
