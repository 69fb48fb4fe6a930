import XCTest
import CountersignHTTP
@testable import CountersignSigning

/// `AWSHeadSigner` over a serialized head as it goes upstream, against signatures botocore's
/// `S3SigV4Auth` made for the same request, keys and time (computed with botocore 1.43).
final class AWSHeadSignerTests: XCTestCase {
    static let credentials = AWSCredentials(accessKeyID: "AKIDREAL", secretAccessKey: "real-secret", sessionToken: "real-token")
    static let time: Int64 = 1_440_938_160   // 2015-08-30T12:36:00Z

    private func sign(_ head: String, payload: AWSPayloadMode, hasBody: Bool) throws -> (Int, HeaderFields) {
        let signer = AWSHeadSigner(region: "us-east-1", service: "s3", payload: payload)
        let target = head.split(separator: " ")[1]
        let signed = try signer.sign(head: Array(head.utf8), credentials: Self.credentials, scheme: "http", authority: "bucket.example:9000",
                                     originTarget: String(target), targetPrefix: "", hasBody: hasBody, now: Self.time,
                                     keys: AWSSigningKeyCache(capacity: 2))
        guard case .complete(let request, _) = signed.head.withUnsafeBytes({ HeadParser.parseRequest($0, maxHeadBytes: signed.head.count) }) else {
            XCTFail("the signed head does not parse")
            return (0, HeaderFields())
        }
        return (signed.head.count, request.headers)
    }

    /// A client that did not sign: every end-to-end field but User-Agent is signed, UNSIGNED-PAYLOAD.
    func testUnsignedPayloadHeaderFormMatchesBotocore() throws {
        let (_, fields) = try sign("GET /box/key?list-type=2 HTTP/1.1\r\nHost: bucket.example:9000\r\nUser-Agent: curl\r\nAccept: */*\r\n\r\n",
                                   payload: .unsigned, hasBody: false)
        XCTAssertEqual(fields.values("X-Amz-Content-Sha256"), ["UNSIGNED-PAYLOAD"])
        XCTAssertEqual(fields.values("X-Amz-Date"), ["20150830T123600Z"])
        XCTAssertEqual(fields.values("X-Amz-Security-Token"), ["real-token"])
        XCTAssertEqual(fields.values("Authorization"), [
            "AWS4-HMAC-SHA256 Credential=AKIDREAL/20150830/us-east-1/s3/aws4_request, "
            + "SignedHeaders=accept;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, "
            + "Signature=92aacb9576b659c64b58abd2be698b5758da684f5bdd47ee3daaf9dca4a3f573"])
    }

    /// `payload: signed`: the hash the body holder put in X-Amz-Content-Sha256 is what is signed,
    /// and a placeholder signature the SDK made is gone.
    func testSignedPayloadReplacesThePlaceholderSignature() throws {
        let hash = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"   // SHA-256 of "hello"
        let head = "PUT /box/key HTTP/1.1\r\nHost: bucket.example:9000\r\nContent-Length: 5\r\nX-Amz-Content-Sha256: \(hash)\r\n"
            + "X-Amz-Date: 20150830T120000Z\r\nAuthorization: AWS4-HMAC-SHA256 Credential=PLACEHOLDER/20150830/us-east-1/s3/aws4_request, "
            + "SignedHeaders=content-length;host;x-amz-content-sha256;x-amz-date, Signature=00\r\n\r\n"
        let (_, fields) = try sign(head, payload: .signed, hasBody: true)
        XCTAssertEqual(fields.values("X-Amz-Date"), ["20150830T123600Z"])
        XCTAssertEqual(fields.values("Authorization"), [
            "AWS4-HMAC-SHA256 Credential=AKIDREAL/20150830/us-east-1/s3/aws4_request, "
            + "SignedHeaders=content-length;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, "
            + "Signature=4c5d9c8ab23ddf323f07a1a75cb93b594823ad8897ad2a3188f225f930c9dfca"])
    }

    /// Only `signed` holds a body, and never an aws-chunked one.
    func testWhichBodiesAreHeld() {
        let signed = AWSHeadSigner(region: nil, service: nil, payload: .signed)
        XCTAssertTrue(signed.holdsBody(contentSHA256: nil))
        XCTAssertTrue(signed.holdsBody(contentSHA256: "UNSIGNED-PAYLOAD"))
        XCTAssertFalse(signed.holdsBody(contentSHA256: "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"))
        XCTAssertFalse(signed.holdsBody(contentSHA256: "STREAMING-UNSIGNED-PAYLOAD-TRAILER"))
        XCTAssertFalse(AWSHeadSigner(region: nil, service: nil, payload: .unsigned).holdsBody(contentSHA256: nil))
        XCTAssertFalse(AWSHeadSigner(region: nil, service: nil, payload: .client).holdsBody(contentSHA256: nil))
    }

    /// `payload: signed` with a body the holder did not hash is an error, not an unsigned request.
    func testASignedPayloadWithoutTheHoldersHashIsRefused() {
        XCTAssertThrowsError(try sign("PUT /box/key HTTP/1.1\r\nHost: bucket.example:9000\r\nContent-Length: 5\r\n\r\n", payload: .signed, hasBody: true))
    }
}
