import XCTest
@testable import CountersignSigning

/// The signer's choices beyond the suites: what it refuses to cover because a proxy on the way
/// may change it, where Host comes from, what it refuses to sign at all.
final class AWSSignerTests: XCTestCase {
    static let parameters = AWSSigningParameters(credentials: AWSCredentials(accessKeyID: "AKID", secretAccessKey: "secret"),
                                                 region: "eu-west-1", service: "sqs", unixTime: 1_440_938_160)

    private func signedHeaders(_ signed: AWSSignedRequest) -> String? {
        signed.addedFields.first { $0.name == "Authorization" }?.value.components(separatedBy: "SignedHeaders=").last?.components(separatedBy: ",").first
    }

    /// A field the client names in `Connection` is hop-by-hop (RFC 9110 §7.6.1): the proxy drops
    /// it, so signing it would make a signature the service cannot verify.
    func testFieldsNamedInConnectionAreNotSigned() throws {
        let request = SignableRequest(method: "POST", scheme: "https", authority: "sqs.eu-west-1.amazonaws.com", target: "/", fields: [
            ("Host", "sqs.eu-west-1.amazonaws.com"), ("Connection", "X-Hop, close"), ("connection", "x-other"), ("X-Hop", "1"),
            ("X-Other", "2"), ("X-Kept", "3"), ("Keep-Alive", "timeout=5"), ("TE", "trailers"), ("Proxy-Authorization", "Basic eA=="),
        ])
        let signed = try AWSSigV4Signer.signHeaders(request, Self.parameters, keys: AWSSigningKeyCache(capacity: 1))
        XCTAssertEqual(signedHeaders(signed), "host;x-amz-date;x-kept")
        // The client's own SignedHeaders cannot bring them back either.
        let named = try AWSSigV4Signer.signHeaders(request, AWSSigningParameters(
            credentials: Self.parameters.credentials, region: "eu-west-1", service: "sqs", unixTime: Self.parameters.unixTime,
            headers: .named(["host", "x-hop", "x-other", "x-kept", "keep-alive", "te", "proxy-authorization", "connection"])),
            keys: AWSSigningKeyCache(capacity: 1))
        XCTAssertEqual(signedHeaders(named), "host;x-amz-date;x-kept")
    }

    /// Without a Host field (an HTTP/2 request) the authority is signed as `host`.
    func testHostFromTheAuthority() throws {
        let request = SignableRequest(method: "GET", scheme: "https", authority: "sqs.eu-west-1.amazonaws.com:8443", target: "/", fields: [])
        let signed = try AWSSigV4Signer.signHeaders(request, Self.parameters, keys: AWSSigningKeyCache(capacity: 1))
        XCTAssertTrue(signed.canonicalRequest.contains("\nhost:sqs.eu-west-1.amazonaws.com:8443\n"))
        XCTAssertThrowsError(try AWSSigV4Signer.signHeaders(SignableRequest(method: "GET", scheme: "https", authority: "", target: "/", fields: []),
                                                            Self.parameters))
    }

    func testRefusesWhatCannotBeSigned() {
        let folded = SignableRequest(method: "GET", scheme: "https", authority: "h", target: "/", fields: [("X-A", "a\r\nX-Injected: 1")])
        XCTAssertThrowsError(try AWSSigV4Signer.signHeaders(folded, Self.parameters), "a value with a line break")
        let plain = SignableRequest(method: "GET", scheme: "https", authority: "h", target: "/", fields: [])
        XCTAssertThrowsError(try AWSSigV4Signer.signQuery(plain, Self.parameters, expires: 0))
        XCTAssertThrowsError(try AWSSigV4Signer.signQuery(plain, Self.parameters, expires: 604_801))
        XCTAssertThrowsError(try AWSSigV4Signer.signHeaders(plain, AWSSigningParameters(
            credentials: AWSCredentials(accessKeyID: "AK/ID", secretAccessKey: "s"), region: "eu-west-1", service: "sqs", unixTime: 0)),
            "an access key that would shift the credential scope")
        XCTAssertThrowsError(try AWSSigV4Signer.signHeaders(plain, AWSSigningParameters(
            credentials: AWSCredentials(accessKeyID: "AKID", secretAccessKey: ""), region: "eu-west-1", service: "sqs", unixTime: 0)))
    }

    /// The client's own presign parameters, in any case, are replaced, never signed beside ours.
    func testQueryFormReplacesEveryPresignParameter() throws {
        let request = SignableRequest(method: "GET", scheme: "https", authority: "h", target:
            "/?a=1&x-amz-signature=ff&X-AMZ-CREDENTIAL=evil%2F20150830%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Expires=5", fields: [("Host", "h")])
        let signed = try AWSSigV4Signer.signQuery(request, Self.parameters, expires: 60, keys: AWSSigningKeyCache(capacity: 1))
        let target = try XCTUnwrap(signed.target)
        XCTAssertFalse(target.lowercased().contains("evil"))
        XCTAssertFalse(target.contains("=ff"))
        XCTAssertEqual(target.components(separatedBy: "X-Amz-Expires=").count, 2, target)
        XCTAssertTrue(target.hasPrefix("/?a=1&X-Amz-Algorithm="), target)
    }
}
