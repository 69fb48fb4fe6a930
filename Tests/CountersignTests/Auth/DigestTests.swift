import Foundation
import XCTest
@testable import CountersignAuth
import CountersignHTTP
import CountersignSupport

final class DigestTests: XCTestCase {
    // RFC 7616 §3.9.1.
    let nonce = "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v"
    let opaque = "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
    let cnonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"

    func challenge(_ algorithm: String) throws -> DigestChallenge {
        let field = #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=\#(algorithm), nonce="\#(nonce)", opaque="\#(opaque)""#
        return try DigestChallenge(ChallengeParser.parse(fieldValue: field)[0])
    }

    func fixedResponder(_ value: String) -> DigestResponder { DigestResponder(clientNonce: { value }) }

    /// Built as bytes, the answer still carries an ISO-8859-1 realm (as the parser read the
    /// challenge's bytes) as the same single bytes, and hashes it as before.
    func testAnswerKeepsTheChallengeRealmBytes() throws {
        var session = DigestSession(realm: "caf\u{E9}", nonce: "n")
        let authorization = try fixedResponder("c").authorize(session: &session, user: "u", password: "p", request: DigestRequest(method: "GET", uri: "/"))
        let bytes = authorization.value.bytes
        XCTAssertEqual(Array(bytes.prefix(42)), Array(#"Digest username="u", realm="caf"#.utf8) + [0xE9] + Array(#"", uri="/""#.utf8))
        let algorithm = DigestAlgorithm.md5
        let expected = algorithm.hex("\(algorithm.hex("u:caf\u{E9}:p")):n:00000001:c:auth:\(algorithm.hex("GET:/"))")
        XCTAssertTrue(authorization.value.text.contains(#"response="\#(expected)""#), authorization.value.text)
    }

    /// Client nonces come from a block of random bytes refilled when used up: across several
    /// refills each is 16 fresh bytes in hex, never one seen before.
    func testClientNoncesStayUniqueAcrossRandomBlockRefills() {
        let count = 3 * NonceBytes.blockSize / 16 + 7
        let nonces = (0..<count).map { _ in DigestResponder.randomClientNonce() }
        XCTAssertEqual(Set(nonces).count, count)
        XCTAssertTrue(nonces.allSatisfy { $0.utf8.count == 32 && Hex.decode($0) != nil })
        XCTAssertGreaterThan(Set(nonces.map { $0.prefix(2) }).count, 200, "the bytes are spread, not a counter")
    }

    /// nc is exactly 8 lower-case hex digits (RFC 7616 §3.4), across the whole counter.
    func testNonceCountFormat() {
        XCTAssertEqual([0, 1, 0xff, 0xabc, 0x1234_5678, 0xffff_ffff, 0x9a09_f0a9].map(DigestResponder.formatNonceCount),
                       ["00000000", "00000001", "000000ff", "00000abc", "12345678", "ffffffff", "9a09f0a9"])
        // The digits made eight at a time are those of the number, digit by digit, across the range.
        for count in stride(from: UInt32(0), to: UInt32.max - 0x0101_0101, by: 0x0101_0101 + 0x1357) {
            XCTAssertEqual(DigestResponder.formatNonceCount(count), String(repeating: "0", count: 8 - String(count, radix: 16).count) + String(count, radix: 16))
        }
    }

    func testRFC7616MD5Example() throws {
        var session = DigestSession(challenge: try challenge("MD5"))
        let authorization = try fixedResponder(cnonce).authorize(
            session: &session, user: "Mufasa", password: "Circle of Life", request: DigestRequest(method: "GET", uri: "/dir/index.html"))
        XCTAssertEqual(authorization.value.text, #"Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", algorithm=MD5, nonce="\#(nonce)", nc=00000001, cnonce="\#(cnonce)", qop=auth, response="8ca523f5e9506fed4657c9700eebdbec", opaque="\#(opaque)""#)
    }

    func testRFC7616SHA256Example() throws {
        var session = DigestSession(challenge: try challenge("SHA-256"))
        let authorization = try fixedResponder(cnonce).authorize(
            session: &session, user: "Mufasa", password: "Circle of Life", request: DigestRequest(method: "GET", uri: "/dir/index.html"))
        XCTAssertTrue(authorization.value.text.contains(#"response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1""#), authorization.value.text)
        XCTAssertTrue(authorization.value.text.contains("algorithm=SHA-256, "))
    }

    /// RFC 7616 §3.9.2 with the corrected values of erratum 4897 (real SHA-512/256).
    func testRFC7616UserhashExampleWithErratum4897Values() throws {
        let field = #"Digest realm="api@example.org", qop="auth", algorithm=SHA-512-256, nonce="5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK", opaque="HRPCssKJSGjCrkzDg8OhwpzCiGPChXYjwrI2QmXDnsOS", charset=UTF-8, userhash=true"#
        let parsed = try DigestChallenge(ChallengeParser.parse(fieldValue: field)[0])
        XCTAssertTrue(parsed.userhash)
        XCTAssertEqual(parsed.charset, "UTF-8")
        var session = DigestSession(challenge: parsed)
        let authorization = try fixedResponder("NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v").authorize(
            session: &session, user: "J\u{E4}s\u{F8}n Doe", password: "Secret, or not?", request: DigestRequest(method: "GET", uri: "/doe.json"))
        XCTAssertEqual(authorization.value.text, #"Digest username="793263caabb707a56211940d90411ea4a575adeccb7e360aeb624ed06ece9b0b", realm="api@example.org", uri="/doe.json", algorithm=SHA-512-256, nonce="5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK", nc=00000001, cnonce="NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v", qop=auth, response="3798d4131c277846293534c3edc11bd8a5e4cdcbff78b05db9d95eeb1cec68a5", opaque="HRPCssKJSGjCrkzDg8OhwpzCiGPChXYjwrI2QmXDnsOS", userhash=true"#)
    }

    func testNonceCountIncrementsPerUseAndNextNonceResetsIt() throws {
        var session = DigestSession(challenge: try challenge("MD5"))
        let responder = fixedResponder("c")
        let request = DigestRequest(method: "GET", uri: "/")
        _ = try responder.authorize(session: &session, user: "u", password: "p", request: request)
        let second = try responder.authorize(session: &session, user: "u", password: "p", request: request)
        XCTAssertTrue(second.value.text.contains("nc=00000002"))
        session.nonceCount = 0xfe
        XCTAssertTrue(try responder.authorize(session: &session, user: "u", password: "p", request: request).value.text.contains("nc=000000ff"))
        session.adopt(nextNonce: "fresh")
        let afterNext = try responder.authorize(session: &session, user: "u", password: "p", request: request)
        XCTAssertTrue(afterNext.value.text.contains(#"nonce="fresh""#))
        XCTAssertTrue(afterNext.value.text.contains("nc=00000001"))
    }

    /// The parameters kept from one answer to the next (username, realm, algorithm, nonce,
    /// opaque) are written once per nonce and user: a later answer is the same text an answer
    /// built from scratch would be, and a new nonce or user is never sent with the old one.
    func testKeptAnswerPartsMatchAFreshAnswerAndFollowNonceAndUser() throws {
        let responder = fixedResponder("c")
        let request = DigestRequest(method: "GET", uri: "/a")
        var session = DigestSession(challenge: try challenge("MD5"))
        _ = try responder.authorize(session: &session, user: "u", password: "p", request: request)
        let kept = try responder.authorize(session: &session, user: "u", password: "p", request: DigestRequest(method: "PUT", uri: "/b"))
        var fresh = DigestSession(challenge: try challenge("MD5"))
        fresh.nonceCount = 1
        XCTAssertEqual(kept.value.text, try responder.authorize(session: &fresh, user: "u", password: "p",
                                                                 request: DigestRequest(method: "PUT", uri: "/b")).value.text)

        let otherUser = try responder.authorize(session: &session, user: "v", password: "p", request: request).value.text
        XCTAssertTrue(otherUser.hasPrefix(#"Digest username="v", "#), otherUser)

        let copy = session
        session.nonce = "set-directly"
        let moved = try responder.authorize(session: &session, user: "v", password: "p", request: request).value.text
        XCTAssertTrue(moved.contains(#"nonce="set-directly""#) && !moved.contains(nonce), moved)
        XCTAssertEqual(copy.nonce, nonce, "a copy keeps its own fields")
        var fromCopy = copy
        XCTAssertTrue(try responder.authorize(session: &fromCopy, user: "v", password: "p", request: request).value.text.contains(#"nonce="\#(nonce)""#))
    }

    /// What a session keeps from one answer to the next for the hashes (KD's input up to the
    /// nonce, the last method and uri's H(A2)) never changes an answer: each response, and the
    /// server's proof checked against it, is what the RFC's formula gives from scratch, as the
    /// request, the nonce and the password change in turn, on MD5 and SHA-256.
    func testKeptHashesFollowRequestNonceAndPassword() throws {
        let responder = fixedResponder("c")
        for algorithm in [DigestAlgorithm.md5, .sha256] {
            var session = DigestSession(challenge: try challenge(algorithm.description))
            let steps: [(method: String, uri: String, password: String, nextNonce: String?)] = [
                ("GET", "/a", "p", nil), ("GET", "/a", "p", nil), ("GET", "/b", "p", nil), ("PUT", "/b", "p", nil),
                ("PUT", "/b", "p", "fresh"), ("PUT", "/b", "q", nil), ("GET", "/a", "q", nil),
            ]
            for (index, step) in steps.enumerated() {
                if let next = step.nextNonce { session.adopt(nextNonce: next) }
                let secret = SecretValue(bytes: algorithm.hexBytes("u:http-auth@example.org:\(step.password)"))
                let authorization = try responder.authorize(session: &session, user: "u", password: step.password,
                                                            request: DigestRequest(method: step.method, uri: step.uri), userRealmPasswordHash: secret)
                let ha1 = algorithm.hex("u:http-auth@example.org:\(step.password)")
                let nc = DigestResponder.formatNonceCount(session.nonceCount)
                func kd(_ a2: String) -> String { algorithm.hex("\(ha1):\(session.nonce):\(nc):c:auth:\(algorithm.hex(a2))") }
                XCTAssertTrue(authorization.value.text.contains(#"response="\#(kd("\(step.method):\(step.uri)"))""#), "\(algorithm) step \(index)")
                XCTAssertEqual(serverReply(#"rspauth="\#(kd(":\(step.uri)"))", cnonce="c", nc=\#(nc)"#, to: authorization)?.proofMismatch, false,
                               "\(algorithm) step \(index)")
                XCTAssertEqual(serverReply(#"rspauth="\#(kd("\(step.method):\(step.uri)"))", cnonce="c", nc=\#(nc)"#, to: authorization)?.proofMismatch, true,
                               "the request's own response is not the server's proof")
            }
        }
    }

    /// An answer's last blocks are laid out by hand (`digest_kd.c`): the bytes the kept prefix
    /// and the nc ":" cnonce ":" qop ":" leave buffered, H(A2), the padding and the length. As
    /// the nonce and cnonce lengths move where a block ends (the padding in the same block as
    /// H(A2), in the next one, H(A2) split across two or three), the response and the server's
    /// proof are still what the RFC's formula gives from scratch, on MD5, SHA-256 and SHA-512-256.
    /// A cnonce of 113 bytes or more makes nc ":" cnonce ":" qop ":" longer than the 128 bytes
    /// `DigestAnswerParts.answer` joins it in on the stack (and than `digest_kd.c` lays out).
    func testAnswerHashesWhereverTheBlocksEnd() throws {
        for algorithm in [DigestAlgorithm.md5, .sha256, .sha512_256] {
            for nonceLength in stride(from: 1, through: 64, by: 3) {
                for cnonceLength in [1, 8, 16, 17, 31, 32, 33, 47, 48, 63, 64, 112, 113, 114, 200] {
                    let nonce = String(repeating: "n", count: nonceLength), cnonce = String(repeating: "c", count: cnonceLength)
                    var session = DigestSession(realm: "r", nonce: nonce, algorithm: algorithm)
                    let authorization = try fixedResponder(cnonce).authorize(session: &session, user: "u", password: "p",
                                                                             request: DigestRequest(method: "GET", uri: "/x"))
                    func kd(_ a2: String) -> String { algorithm.hex("\(algorithm.hex("u:r:p")):\(nonce):00000001:\(cnonce):auth:\(algorithm.hex(a2))") }
                    let named = "\(algorithm), nonce \(nonceLength), cnonce \(cnonceLength)"
                    XCTAssertTrue(authorization.value.text.contains(#"response="\#(kd("GET:/x"))""#), named)
                    XCTAssertEqual(serverReply(#"rspauth="\#(kd(":/x"))", cnonce="\#(cnonce)", nc=00000001"#, to: authorization)?.proofMismatch, false, named)
                }
            }
        }
    }

    /// What `state_dir` keeps of a session: the server's fields and the count, never the parts
    /// written for answers; read back, it is the same session.
    func testSavedSessionLeavesOutTheKeptAnswerParts() throws {
        var session = DigestSession(challenge: try challenge("MD5"))
        _ = try fixedResponder("c").authorize(session: &session, user: "u", password: "p", request: DigestRequest(method: "GET", uri: "/"))
        let data = try JSONEncoder().encode(session)
        let keys = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any]).keys.sorted()
        XCTAssertEqual(keys, ["algorithm", "nonce", "nonceCount", "opaque", "qopOptions", "realm", "userhash"])
        XCTAssertEqual(try JSONDecoder().decode(DigestSession.self, from: data), session)
    }

    func testAuthIntOnlyWithABodyHash() throws {
        var session = DigestSession(challenge: try challenge("SHA-256"))
        let hasher = DigestHasher(algorithm: session.algorithm)
        hasher.update(Array("hello ".utf8))
        hasher.update(Array("world".utf8))
        let bodyHash = hasher.finish()
        XCTAssertEqual(bodyHash, Hex.encode(MessageDigest.hash(.sha256, "hello world")))
        let withBody = try fixedResponder("c").authorize(session: &session, user: "u", password: "p",
                                                         request: DigestRequest(method: "POST", uri: "/x", bodyHash: bodyHash))
        XCTAssertTrue(withBody.value.text.contains("qop=auth-int"))
        let streamed = try fixedResponder("c").authorize(session: &session, user: "u", password: "p",
                                                         request: DigestRequest(method: "POST", uri: "/x"))
        XCTAssertTrue(streamed.value.text.contains("qop=auth,"))

        // auth-int response per RFC 7616 §3.4.3: A2 = method:uri:H(body).
        let algorithm = DigestAlgorithm.sha256
        let ha1 = algorithm.hex("u:http-auth@example.org:p")
        let ha2 = algorithm.hex("POST:/x:\(bodyHash)")
        let expected = algorithm.hex("\(ha1):\(nonce):00000001:c:auth-int:\(ha2)")
        XCTAssertTrue(withBody.value.text.contains(#"response="\#(expected)""#))
    }

    func testAuthIntOnlyServerAndNoBodyHashCannotBeAnswered() throws {
        let challenge = ChallengeParser.parse(fieldValue: #"Digest realm="r", nonce="n", qop="auth-int""#)[0]
        var session = DigestSession(challenge: try DigestChallenge(challenge))
        XCTAssertThrowsError(try fixedResponder("c").authorize(session: &session, user: "u", password: "p",
                                                               request: DigestRequest(method: "PUT", uri: "/")))
    }

    func testRFC2069CompatibilityWhenNoQopOffered() throws {
        let challenge = ChallengeParser.parse(fieldValue: #"Digest realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093""#)[0]
        var session = DigestSession(challenge: try DigestChallenge(challenge))
        let authorization = try fixedResponder("unused").authorize(
            session: &session, user: "Mufasa", password: "CircleOfLife", request: DigestRequest(method: "GET", uri: "/dir/index.html"))
        // RFC 2069 §2.4 example response.
        XCTAssertTrue(authorization.value.text.contains(#"response="1949323746fe6a43ef61f9606e7febea""#), authorization.value.text)
        XCTAssertFalse(authorization.value.text.contains("nc="))
        XCTAssertFalse(authorization.value.text.contains("qop="))
        XCTAssertFalse(authorization.value.text.contains("cnonce="))
    }

    func testSessAlgorithmHashesNonceAndCnonceIntoA1() throws {
        var session = DigestSession(challenge: try challenge("MD5-sess"))
        let authorization = try fixedResponder("c").authorize(session: &session, user: "u", password: "p", request: DigestRequest(method: "GET", uri: "/"))
        let algorithm = DigestAlgorithm(hash: .md5, isSession: true)
        let ha1 = algorithm.hex("\(algorithm.hex("u:http-auth@example.org:p")):\(nonce):c")
        let expected = algorithm.hex("\(ha1):\(nonce):00000001:c:auth:\(algorithm.hex("GET:/"))")
        XCTAssertTrue(authorization.value.text.contains(#"response="\#(expected)""#))
        XCTAssertTrue(authorization.value.text.contains("algorithm=MD5-sess,"))
    }

    func testAlgorithmTokens() {
        XCTAssertEqual(DigestAlgorithm(token: "sha-512-256-SESS"), DigestAlgorithm(hash: .sha512_256, isSession: true))
        XCTAssertEqual(DigestAlgorithm(token: "SHA-256")?.description, "SHA-256")
        XCTAssertNil(DigestAlgorithm(token: "SHA-512"), "httpbin's SHA-512 is not an RFC 7616 algorithm")
        XCTAssertThrowsError(try DigestChallenge(Challenge(scheme: "Digest", params: [("realm", "r"), ("nonce", "n"), ("algorithm", "SHA-512")])))
        XCTAssertThrowsError(try DigestChallenge(Challenge(scheme: "Digest", params: [("realm", "r")])))
    }

    func testNonASCIIUserWithoutUserhashUsesExtendedUsername() throws {
        var session = DigestSession(realm: "r", nonce: "n")
        let authorization = try fixedResponder("c").authorize(session: &session, user: "J\u{E4}s\u{F8}n Doe", password: "p",
                                                              request: DigestRequest(method: "GET", uri: "/"))
        XCTAssertTrue(authorization.value.text.hasPrefix("Digest username*=UTF-8''J%C3%A4s%C3%B8n%20Doe, "), authorization.value.text)
    }

    func testQuotedValuesAreEscaped() throws {
        var session = DigestSession(realm: #"a"b\c"#, nonce: "n")
        let authorization = try fixedResponder("c").authorize(session: &session, user: "u", password: "p", request: DigestRequest(method: "GET", uri: "/"))
        XCTAssertTrue(authorization.value.text.contains(#"realm="a\"b\\c""#))
        XCTAssertEqual(ChallengeParser.parse(fieldValue: authorization.value.text)[0].realm, #"a"b\c"#)
        // The request's own values too: a uri or cnonce that needs escaping leaves the one-copy
        // path for the writer, which escapes it; the same answer otherwise.
        var plain = DigestSession(realm: "r", nonce: "n"), escaped = plain
        let expected = try fixedResponder("c").authorize(session: &plain, user: "u", password: "p", request: DigestRequest(method: "GET", uri: "/")).value.text
        let odd = try fixedResponder(#"c""#).authorize(session: &escaped, user: "u", password: "p", request: DigestRequest(method: "GET", uri: #"/a"b"#))
        let parsed = ChallengeParser.parse(fieldValue: odd.value.text)[0]
        XCTAssertEqual(parsed[param: "uri"], #"/a"b"#, odd.value.text)
        XCTAssertEqual(parsed[param: "cnonce"], #"c""#, odd.value.text)
        let usual = ChallengeParser.parse(fieldValue: expected)[0]
        for name in ["username", "realm", "algorithm", "nonce", "nc", "qop"] {
            XCTAssertEqual(parsed[param: name], usual[param: name], name)
        }
        XCTAssertEqual(parsed[param: "response"]?.utf8.count, 32)
    }

    /// A uri is looked at eight bytes at a time for what must be escaped: a `"` or `\\` at any
    /// place, in a whole word or the bytes after the last, is still escaped, a non-ASCII byte
    /// still written as ISO-8859-1 by the writer, and a plain uri still goes in as it is.
    func testUriNeedingEscapesIsFoundAnywhere() throws {
        for length in 1...24 {
            for place in 0..<length {
                for odd in [#"""#, #"\"#, "\u{E9}"] {
                    var characters = Array(repeating: "a", count: length)
                    characters[0] = "/"
                    characters[place] = odd
                    let uri = characters.joined()
                    var session = DigestSession(realm: "r", nonce: "n")
                    let value = try fixedResponder("c").authorize(session: &session, user: "u", password: "p",
                                                                  request: DigestRequest(method: "GET", uri: uri)).value.bytes
                    let named = "length \(length), \(odd) at \(place)"
                    if odd == "\u{E9}" {
                        XCTAssertTrue(value.contains(0xE9) && !value.contains(0xC3), named)
                    } else {
                        let text = String(decoding: value, as: UTF8.self)
                        XCTAssertEqual(ChallengeParser.parse(fieldValue: text).first?[param: "uri"], uri, named)
                        XCTAssertTrue(text.contains(#"uri=""# + uri.replacingOccurrences(of: "\\", with: #"\\"#)
                                                    .replacingOccurrences(of: #"""#, with: #"\""#) + #"""#), named)
                    }
                }
                let plain = "/" + String(repeating: "b", count: length)
                var session = DigestSession(realm: "r", nonce: "n")
                let value = try fixedResponder("c").authorize(session: &session, user: "u", password: "p",
                                                              request: DigestRequest(method: "GET", uri: plain)).value.text
                XCTAssertTrue(value.contains(#"uri="\#(plain)""#), value)
            }
        }
    }

    /// The server's `Authentication-Info` value read as `complete` reads it, against `authorization`.
    private func serverReply(_ value: String, to authorization: DigestAuthorization) -> DigestReply? {
        DigestReply.read(HeaderFields([HeaderField("Authentication-Info", value)]), field: .authenticationInfo, proof: authorization.proof,
                         clientNonce: authorization.clientNonce)
    }

    func testRspauthVerification() throws {
        var session = DigestSession(challenge: try challenge("SHA-256"))
        let authorization = try fixedResponder("c").authorize(session: &session, user: "u", password: "p", request: DigestRequest(method: "GET", uri: "/r"))
        let algorithm = DigestAlgorithm.sha256
        let ha1 = algorithm.hex("u:http-auth@example.org:p")
        let rspauth = algorithm.hex("\(ha1):\(nonce):00000001:c:auth:\(algorithm.hex(":/r"))")
        func reply(_ value: String) -> DigestReply? { serverReply(value, to: authorization) }
        XCTAssertEqual(reply(#"rspauth="\#(rspauth)", qop=auth, nc=00000001, cnonce="c""#)?.proofMismatch, false)
        XCTAssertEqual(reply(#"rspauth="\#(String(repeating: "0", count: 64))""#)?.proofMismatch, true)
        XCTAssertEqual(reply(#"rspauth="\#(rspauth)", cnonce="other""#)?.proofMismatch, true)
        XCTAssertFalse(authorization.description.contains(ha1))
    }

    /// The check `complete` makes on every answered response, from the field's bytes: the
    /// server's proof in either case verifies, with its cnonce escaped or not; a wrong proof, a
    /// cnonce or nc other than the ones sent, do not; no rspauth is no verdict; nextnonce is read.
    func testReplyFromFieldBytesChecksTheServersProof() throws {
        var session = DigestSession(challenge: try challenge("MD5"))
        let authorization = try fixedResponder("c").authorize(session: &session, user: "u", password: "p", request: DigestRequest(method: "GET", uri: "/r"))
        let algorithm = DigestAlgorithm.md5
        let ha1 = algorithm.hex("u:http-auth@example.org:p")
        let rspauth = algorithm.hex("\(ha1):\(nonce):00000001:c:auth:\(algorithm.hex(":/r"))")
        func reply(_ value: String) -> DigestReply? { serverReply(value, to: authorization) }
        XCTAssertEqual(reply(#"rspauth="\#(rspauth)", cnonce="c", nc=00000001, qop=auth"#)?.proofMismatch, false)
        XCTAssertEqual(reply(#"rspauth="\#(rspauth.uppercased())", cnonce="\c", nc=00000001"#)?.proofMismatch, false)
        XCTAssertEqual(reply(#"rspauth="\#(rspauth.dropLast())\#(rspauth.last == "0" ? "1" : "0")", cnonce="c", nc=00000001"#)?.proofMismatch, true)
        XCTAssertEqual(reply(#"rspauth="\#(rspauth)", cnonce="d", nc=00000001"#)?.proofMismatch, true)
        XCTAssertEqual(reply(#"rspauth="\#(rspauth)", cnonce="c", nc=00000002"#)?.proofMismatch, true)
        XCTAssertEqual(reply(#"rspauth="\#(rspauth)x""#)?.proofMismatch, true)
        // The first of a repeated name counts.
        XCTAssertEqual(reply(#"rspauth="\#(rspauth)", rspauth="0""#)?.proofMismatch, false)
        XCTAssertEqual(reply(#"rspauth="0", rspauth="\#(rspauth)""#)?.proofMismatch, true)
        let fresh = reply(#"nextnonce="fresh", qop=auth"#)
        XCTAssertEqual(fresh?.nextNonce, "fresh")
        XCTAssertEqual(fresh?.proofMismatch, false)
        XCTAssertNil(reply(" , "))
    }

    /// A reply with no answer's proof to check it against: its `nextnonce` is still taken, and
    /// whatever `rspauth`, cnonce or nc it carries is no verdict (no mismatch).
    func testReplyWithoutProofTakesNextNonceOnly() {
        func reply(_ value: String) -> DigestReply? {
            DigestReply.read(HeaderFields([HeaderField("Authentication-Info", value)]), field: .authenticationInfo, proof: nil, clientNonce: "c")
        }
        let read = reply(#"rspauth="0", cnonce="d", nc=00000009, nextnonce="fresh""#)
        XCTAssertEqual(read?.nextNonce, "fresh")
        XCTAssertEqual(read?.proofMismatch, false)
        XCTAssertEqual(reply(#"rspauth="0""#)?.proofMismatch, false)
        XCTAssertNil(reply(#"rspauth="0""#)?.nextNonce)
        XCTAssertNil(reply(" , "))
    }

    /// One cnonce per nonce: the answers with a nonce send the one drawn for it with a count one
    /// higher each time, and a nonce the server chose after seeing it (`nextnonce`), a nonce set
    /// anew or another user's answer draw a fresh one (RFC 7616 §5.12: the server never picks
    /// a nonce knowing the cnonce that goes with it). The responses follow the RFC's formula.
    func testOneClientNoncePerNonceWithCountsGrowing() throws {
        let drawn = Mutex(0)
        let responder = DigestResponder(clientNonce: { "c\(drawn.withLock { count in count += 1; return count })" })
        let request = DigestRequest(method: "GET", uri: "/a")
        func fields(_ authorization: DigestAuthorization) -> (cnonce: String?, nc: String?, response: String?) {
            let parsed = ChallengeParser.parse(fieldValue: authorization.value.text)[0]
            return (parsed[param: "cnonce"], parsed[param: "nc"], parsed[param: "response"])
        }
        let algorithm = DigestAlgorithm.md5
        let ha1 = algorithm.hex("u:http-auth@example.org:p")
        var session = DigestSession(challenge: try challenge("MD5"))
        var answers: [(cnonce: String?, nc: String?, response: String?)] = []
        for _ in 0..<3 { answers.append(fields(try responder.authorize(session: &session, user: "u", password: "p", request: request))) }
        XCTAssertEqual(answers.map(\.cnonce), ["c1", "c1", "c1"])
        XCTAssertEqual(answers.map(\.nc), ["00000001", "00000002", "00000003"])
        XCTAssertEqual(answers.map(\.response), ["00000001", "00000002", "00000003"].map {
            algorithm.hex("\(ha1):\(nonce):\($0):c1:auth:\(algorithm.hex("GET:/a"))")
        })

        session.adopt(nextNonce: "fresh")
        let afterNext = fields(try responder.authorize(session: &session, user: "u", password: "p", request: request))
        XCTAssertEqual(afterNext.cnonce, "c2")
        XCTAssertEqual(afterNext.nc, "00000001")
        XCTAssertEqual(afterNext.response, algorithm.hex("\(ha1):fresh:00000001:c2:auth:\(algorithm.hex("GET:/a"))"))
        session.nonce = "set-directly"
        XCTAssertEqual(fields(try responder.authorize(session: &session, user: "u", password: "p", request: request)).cnonce, "c3")
        XCTAssertEqual(fields(try responder.authorize(session: &session, user: "v", password: "p", request: request)).cnonce, "c4")
        XCTAssertEqual(fields(try DigestResponder().authorize(session: &session, user: "w", password: "p", request: request)).cnonce?.utf8.count, 32,
                       "the default cnonce is 16 random bytes in hex")
    }

    /// With `-sess`, H(A1) takes the nonce's one cnonce: every answer with the nonce uses the
    /// same session key, and a `nextnonce` makes a new one with a new cnonce.
    func testSessAlgorithmKeepsOneSessionKeyPerNonce() throws {
        let drawn = Mutex(0)
        let responder = DigestResponder(clientNonce: { "c\(drawn.withLock { count in count += 1; return count })" })
        let algorithm = DigestAlgorithm(hash: .sha256, isSession: true)
        var session = DigestSession(challenge: try challenge("SHA-256-sess"))
        for (step, uri) in ["/a", "/b", "/b"].enumerated() {
            if step == 2 { session.adopt(nextNonce: "fresh") }
            let authorization = try responder.authorize(session: &session, user: "u", password: "p", request: DigestRequest(method: "GET", uri: uri))
            let cnonce = step == 2 ? "c2" : "c1", nc = step == 1 ? "00000002" : "00000001"
            let ha1 = algorithm.hex("\(algorithm.hex("u:http-auth@example.org:p")):\(session.nonce):\(cnonce)")
            func kd(_ a2: String) -> String { algorithm.hex("\(ha1):\(session.nonce):\(nc):\(cnonce):auth:\(algorithm.hex(a2))") }
            XCTAssertTrue(authorization.value.text.contains(#"nc=\#(nc), cnonce="\#(cnonce)", qop=auth, response="\#(kd("GET:\(uri)"))""#),
                          "step \(step): \(authorization.value.text)")
            XCTAssertEqual(serverReply(#"rspauth="\#(kd(":\(uri)"))", cnonce="\#(cnonce)", nc=\#(nc)"#, to: authorization)?.proofMismatch, false, "step \(step)")
        }
    }

    /// The server's proof for qop=auth-int covers the body too (A2 = ":" uri ":" H(body)), and
    /// without qop (RFC 2069) it has no count or cnonce: a reply naming either does not prove it.
    func testRspauthWithAuthIntAndWithoutQop() throws {
        let algorithm = DigestAlgorithm.sha256
        let ha1 = algorithm.hex("u:http-auth@example.org:p")
        let bodyHash = algorithm.hex("hello")
        var session = DigestSession(challenge: try challenge("SHA-256"))
        let withBody = try fixedResponder("c").authorize(session: &session, user: "u", password: "p",
                                                         request: DigestRequest(method: "POST", uri: "/x", bodyHash: bodyHash))
        let bodyProof = algorithm.hex("\(ha1):\(nonce):00000001:c:auth-int:\(algorithm.hex(":/x:\(bodyHash)"))")
        XCTAssertEqual(serverReply(#"rspauth="\#(bodyProof)", cnonce="c", nc=00000001, qop=auth-int"#, to: withBody)?.proofMismatch, false)
        let withoutBody = algorithm.hex("\(ha1):\(nonce):00000001:c:auth-int:\(algorithm.hex(":/x"))")
        XCTAssertEqual(serverReply(#"rspauth="\#(withoutBody)""#, to: withBody)?.proofMismatch, true)

        let md5 = DigestAlgorithm.md5
        var plain = DigestSession(challenge: try DigestChallenge(ChallengeParser.parse(fieldValue: #"Digest realm="r", nonce="n""#)[0]))
        let old = try fixedResponder("c").authorize(session: &plain, user: "u", password: "p", request: DigestRequest(method: "GET", uri: "/y"))
        let oldProof = md5.hex("\(md5.hex("u:r:p")):n:\(md5.hex(":/y"))")
        XCTAssertEqual(serverReply(#"rspauth="\#(oldProof)""#, to: old)?.proofMismatch, false)
        XCTAssertEqual(serverReply(#"rspauth="\#(oldProof)", cnonce="c""#, to: old)?.proofMismatch, true)
        XCTAssertEqual(serverReply(#"rspauth="\#(oldProof)", nc=00000001"#, to: old)?.proofMismatch, true)
        // The session draws a cnonce even then, but it never went with the answer: a reply naming it does not prove it.
        let namingSessions = DigestReply.read(HeaderFields([HeaderField("Authentication-Info", #"rspauth="\#(oldProof)", cnonce="c""#)]),
                                              field: .authenticationInfo, proof: old.proof, clientNonce: plain.clientNonce)
        XCTAssertEqual(plain.clientNonce, "c")
        XCTAssertEqual(namingSessions?.proofMismatch, true)
    }

    func testSessionIsCodableWithoutSecrets() throws {
        var session = DigestSession(challenge: try challenge("SHA-512-256-sess"))
        _ = try fixedResponder("c").authorize(session: &session, user: "u", password: "hunter2", request: DigestRequest(method: "GET", uri: "/"))
        let data = try JSONEncoder().encode(session)
        XCTAssertEqual(try JSONDecoder().decode(DigestSession.self, from: data), session)
        XCTAssertFalse(String(decoding: data, as: UTF8.self).contains("hunter2"))
        XCTAssertEqual(session.nonceCount, 1)
        // What a session keeps for the next answer (KD's prefix, which holds H(A1)) shows nothing through `dump`.
        var kept = DigestSession(challenge: try challenge("MD5"))
        _ = try fixedResponder("c").authorize(session: &kept, user: "u", password: "hunter2", request: DigestRequest(method: "GET", uri: "/"))
        var dumped = ""
        dump(kept, to: &dumped)
        XCTAssertTrue(dumped.contains("noncePrefix"), dumped)
        XCTAssertFalse(dumped.contains("ha1"), dumped)
    }
}
