import XCTest
@testable import CountersignSigning

/// `verify_responses`' digest rules over a response signed with RFC 9421's shared secret: a
/// Content-Digest must match the body; "required" demands one on a response with content;
/// a response without content (HEAD, 204, 304) is judged by its signature alone.
final class ResponseVerifierTests: XCTestCase {
    let body = Array(#"{"hello": "world"}"#.utf8)
    let secret = RFC9421VectorTests.sharedSecret

    private func signedResponse(withDigest: Bool) throws -> SignableResponse {
        var fields: [(name: String, value: String)] = [("Content-Type", "application/json")]
        if withDigest { fields.append(("Content-Digest", ContentDigester.fieldValue(of: body, .sha256))) }
        let covered = try (["@status"] + (withDigest ? ["content-digest"] : [])).map(SignatureComponent.parse)
        let signature = try MessageSigner.sign(.response(SignableResponse(status: 200, fields: fields, request: nil)), label: "r", components: covered,
                                               parameters: SignatureParameters(created: 1000, keyID: "k"), key: MessageSigningKey(sharedSecret: secret))
        return SignableResponse(status: 200, fields: fields + [("Signature-Input", signature.signatureInput), ("Signature", signature.signature)], request: nil)
    }

    private func verifier(_ rule: ResponseVerifier.DigestRule, requiring: [String] = ["@status"]) throws -> ResponseVerifier {
        ResponseVerifier(key: try MessageVerifyingKey(sharedSecret: secret), keyID: "k",
                         requirements: VerificationRequirements(requiredComponents: try requiring.map(SignatureComponent.parse), maxAge: 60), digestRule: rule)
    }

    private func digest(of content: [UInt8]) -> (ContentDigester.Algorithm) -> [UInt8] {
        { algorithm in
            let digester = ContentDigester(algorithm)
            digester.update(content)
            return digester.finish()
        }
    }

    func testDigestRules() throws {
        let withDigest = try signedResponse(withDigest: true), without = try signedResponse(withDigest: false)
        XCTAssertNoThrow(try verifier(.required).verify(withDigest, hasContent: true, now: 1010, digest: digest(of: body)).get())
        XCTAssertThrowsError(try verifier(.required).verify(withDigest, hasContent: true, now: 1010, digest: digest(of: body + [0x20])).get())
        XCTAssertThrowsError(try verifier(.required).verify(without, hasContent: true, now: 1010, digest: digest(of: body)).get())
        XCTAssertNoThrow(try verifier(.ifPresent).verify(without, hasContent: true, now: 1010, digest: digest(of: body)).get())
        XCTAssertThrowsError(try verifier(.ifPresent).verify(withDigest, hasContent: true, now: 1010, digest: digest(of: [])).get())
        XCTAssertNoThrow(try verifier(.required).verify(withDigest, hasContent: false, now: 1010, digest: digest(of: [])).get(), "a HEAD response")
    }

    func testRequiredComponentsAndAge() throws {
        let without = try signedResponse(withDigest: false)
        XCTAssertThrowsError(try verifier(.ifPresent, requiring: ["@status", "content-digest"]).verify(without, hasContent: true, now: 1010, digest: digest(of: body)).get())
        XCTAssertThrowsError(try verifier(.ifPresent).verify(without, hasContent: true, now: 1061, digest: digest(of: body)).get(), "older than max_age")
        XCTAssertThrowsError(try verifier(.ifPresent).verify(without, hasContent: true, now: 900, digest: digest(of: body)).get(), "created in the future")
    }
}
