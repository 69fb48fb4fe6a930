import XCTest
@testable import CountersignSigning

/// Re-signing what an SDK sent with placeholder keys, reading its credential scope, and the
/// pieces around: the timestamp, the derived-key cache, what never leaks.
final class AWSResignerTests: XCTestCase {
    static let credentials = AWSCredentials(accessKeyID: "AKIDREAL", secretAccessKey: "real-secret", sessionToken: "real-token")
    static let time: Int64 = 1_440_938_160   // 2015-08-30T12:36:00Z

    static let sdkRequest = SignableRequest(method: "GET", scheme: "https", authority: "bucket.s3.eu-west-1.amazonaws.com", target: "/key?list-type=2", fields: [
        ("Host", "bucket.s3.eu-west-1.amazonaws.com"), ("User-Agent", "Boto3/1.36"), ("Range", "bytes=0-9"),
        ("X-Amz-Date", "20150830T120000Z"), ("X-Amz-Security-Token", "placeholder-token"),
        ("X-Amz-Content-Sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("Authorization", "AWS4-HMAC-SHA256 Credential=PLACEHOLDER/20150830/eu-west-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=00"),
    ])

    func testTimestamp() {
        XCTAssertEqual(AWSTimestamp(unixSeconds: Self.time).amzDate, "20150830T123600Z")
        XCTAssertEqual(AWSTimestamp(unixSeconds: 0).amzDate, "19700101T000000Z")
        XCTAssertEqual(AWSTimestamp(unixSeconds: 951_782_400).amzDate, "20000229T000000Z")
        XCTAssertEqual(AWSTimestamp(unixSeconds: 4_102_444_799).amzDate, "20991231T235959Z")
    }

    func testReadsTheClientsScopeAndSignedHeaders() throws {
        XCTAssertEqual(try AWSClientSignature.read(Self.sdkRequest), .header(
            scope: AWSCredentialScope(date: "20150830", region: "eu-west-1", service: "s3"),
            signedHeaders: ["host", "range", "x-amz-content-sha256", "x-amz-date", "x-amz-security-token"]))
        let presigned = SignableRequest(method: "GET", scheme: "https", authority: "minio.internal:9000", target:
            "/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=PLACEHOLDER%2F20150830%2Fus-west-2%2Fs3%2Faws4_request&X-Amz-Date=20150830T120000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=00",
            fields: [("Host", "minio.internal:9000")])
        XCTAssertEqual(try AWSClientSignature.read(presigned), .presignedQuery(
            scope: AWSCredentialScope(date: "20150830", region: "us-west-2", service: "s3"), signedHeaders: ["host"], expires: 900))
    }

    /// The placeholders go, ours come, the SDK's choice of signed headers (Range) is kept and
    /// User-Agent stays unsigned; nothing of the placeholder is signed or sent again.
    func testHeaderFormReplacesThePlaceholderSignature() throws {
        let plan = try AWSResigner.resign(Self.sdkRequest, credentials: Self.credentials, region: "eu-west-1", service: "s3",
                                          unixTime: Self.time, payload: .signed(.emptyBody), keys: AWSSigningKeyCache(capacity: 2))
        XCTAssertEqual(plan.signed.removedFields, ["authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256"])
        XCTAssertEqual(plan.signed.addedFields.map(\.name), ["X-Amz-Security-Token", "X-Amz-Date", "X-Amz-Content-Sha256", "Authorization"])
        XCTAssertEqual(plan.signed.addedFields[0].value, "real-token")
        let authorization = plan.signed.addedFields[3].value
        XCTAssertTrue(authorization.hasPrefix("AWS4-HMAC-SHA256 Credential=AKIDREAL/20150830/eu-west-1/s3/aws4_request, "
                                              + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature="), authorization)
        XCTAssertFalse(plan.signed.canonicalRequest.contains("placeholder"))
        XCTAssertFalse(plan.signed.canonicalRequest.contains("user-agent"))
        XCTAssertTrue(plan.signed.canonicalRequest.contains("list-type=2"))
    }

    /// `payload: client` keeps the SDK's X-Amz-Content-Sha256 and signs it; `unsigned` replaces it.
    func testPayloadModes() throws {
        let client = try AWSResigner.resign(Self.sdkRequest, credentials: Self.credentials, region: "eu-west-1", service: "s3",
                                            unixTime: Self.time, payload: .client)
        XCTAssertFalse(client.signed.removedFields.contains("x-amz-content-sha256"))
        XCTAssertTrue(client.signed.canonicalRequest.hasSuffix("\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
        let unsigned = try AWSResigner.resign(Self.sdkRequest, credentials: Self.credentials, region: "eu-west-1", service: "s3",
                                              unixTime: Self.time, payload: .unsigned)
        XCTAssertTrue(unsigned.signed.addedFields.contains { $0 == ("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD") })
        XCTAssertTrue(unsigned.signed.canonicalRequest.hasSuffix("\nUNSIGNED-PAYLOAD"))
        // An SQS request from botocore has no X-Amz-Content-Sha256: "client" cannot know its mode.
        let sqs = SignableRequest(method: "POST", scheme: "https", authority: "sqs.eu-west-1.amazonaws.com", target: "/", fields: [("Host", "sqs.eu-west-1.amazonaws.com")])
        XCTAssertThrowsError(try AWSResigner.resign(sqs, credentials: Self.credentials, region: "eu-west-1", service: "sqs", unixTime: Self.time, payload: .client))
    }

    /// A presigned URL is re-signed in the query: its X-Amz-Expires kept, the placeholder
    /// credential and signature gone, the operation's own parameters kept as sent.
    func testPresignedQueryIsResignedInTheQuery() throws {
        let presigned = SignableRequest(method: "GET", scheme: "https", authority: "bucket.s3.amazonaws.com", target:
            "/k%20ey?versionId=3&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=PLACEHOLDER%2F20150830%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20150830T120000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Security-Token=placeholder&X-Amz-Signature=00",
            fields: [("Host", "bucket.s3.amazonaws.com")])
        let plan = try AWSResigner.resign(presigned, credentials: Self.credentials, region: "us-east-1", service: "s3", unixTime: Self.time,
                                          payload: .signed(.emptyBody))
        let target = try XCTUnwrap(plan.signed.target)
        XCTAssertTrue(target.hasPrefix("/k%20ey?versionId=3&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDREAL%2F20150830%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-SignedHeaders=host&X-Amz-Expires=900&X-Amz-Security-Token=real-token&X-Amz-Signature="), target)
        XCTAssertFalse(target.contains("PLACEHOLDER"))
        XCTAssertFalse(target.contains("placeholder"))
        XCTAssertEqual(plan.payload, .unsigned, "S3 presigned URLs sign UNSIGNED-PAYLOAD")
        XCTAssertEqual(plan.signed.addedFields.count, 0)
    }

    /// What a client could send to get something odd signed: refused with a reason.
    func testRefusesMalformedClientSigning() {
        let bad: [(String, [(String, String)], String)] = [
            ("a SigV4a Authorization", [("Authorization", "AWS4-ECDSA-P256-SHA256 Credential=A/20150830/s3/aws4_request, SignedHeaders=host, Signature=00")], "/"),
            ("two Authorization fields", [("Authorization", Self.sdkRequest.fields[6].value), ("Authorization", Self.sdkRequest.fields[6].value)], "/"),
            ("a scope with a newline", [("Authorization", "AWS4-HMAC-SHA256 Credential=A/20150830/eu\nwest/s3/aws4_request, SignedHeaders=host, Signature=00")], "/"),
            ("a scope with a bad date", [("Authorization", "AWS4-HMAC-SHA256 Credential=A/2015-08-30/eu-west-1/s3/aws4_request, SignedHeaders=host, Signature=00")], "/"),
            ("upper-case signed headers", [("Authorization", "AWS4-HMAC-SHA256 Credential=A/20150830/eu-west-1/s3/aws4_request, SignedHeaders=Host, Signature=00")], "/"),
            ("too many signed headers", [("Authorization", "AWS4-HMAC-SHA256 Credential=A/20150830/eu-west-1/s3/aws4_request, SignedHeaders="
                                          + (0..<65).map { "h\($0)" }.joined(separator: ";") + ", Signature=00")], "/"),
            ("a week-plus expiry", [], "/?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=A%2F20150830%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Expires=604801&X-Amz-Signature=00"),
            ("a negative expiry", [], "/?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=A%2F20150830%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Expires=-5&X-Amz-Signature=00"),
            ("two content hashes", [("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD"), ("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")], "/"),
            ("a SigV4a streaming mode", [("X-Amz-Content-Sha256", "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD")], "/"),
        ]
        for (why, fields, target) in bad {
            let request = SignableRequest(method: "GET", scheme: "https", authority: "s3.amazonaws.com", target: target,
                                          fields: [("Host", "s3.amazonaws.com")] + fields)
            XCTAssertThrowsError(try AWSResigner.resign(request, credentials: Self.credentials, region: "us-east-1", service: "s3",
                                                        unixTime: Self.time, payload: .unsigned), why)
        }
        XCTAssertThrowsError(try AWSSigV4Signer.signHeaders(Self.sdkRequest, AWSSigningParameters(
            credentials: Self.credentials, region: "eu-west-1/../x", service: "s3", unixTime: Self.time)), "a region that is not a token")
    }

    /// The derived key is made once per scope and is the one the chain defines.
    func testDerivedKeyCache() {
        let cache = AWSSigningKeyCache(capacity: 2)
        let scope = AWSCredentialScope(date: "20150830", region: "us-east-1", service: "iam")
        let key = cache.key(for: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"), scope: scope)
        // AWS's documented derived key for this secret and scope (the SigV4 "derive a signing key" example).
        XCTAssertEqual(key.map { String(format: "%02x", $0) }.joined(), "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9")
        XCTAssertEqual(cache.count, 1)
        _ = cache.key(for: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "rotated"), scope: scope)
        XCTAssertEqual(cache.count, 2, "a rotated secret under the same access key gets its own key")
        _ = cache.key(for: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "third"), scope: scope)
        XCTAssertEqual(cache.count, 1, "a full cache is emptied, never grows past its bound")
    }

    /// Printing, debug-printing or dumping what holds a secret, a token or a derived key shows
    /// none of them (a log line or error body built from one by accident stays clean).
    func testNothingPrintsSecretsTokensOrKeys() throws {
        let plan = try AWSResigner.resign(Self.sdkRequest, credentials: Self.credentials, region: "eu-west-1", service: "s3",
                                          unixTime: Self.time, payload: .signed(.emptyBody), keys: AWSSigningKeyCache(capacity: 2))
        let key = plan.signed.signingKey.map { String(format: "%02x", $0) }.joined()
        let printables: [Any] = [Self.credentials, plan.signed, plan.signed.chunkSigner(), plan,
                                 AWSSigningParameters(credentials: Self.credentials, region: "eu-west-1", service: "s3", unixTime: Self.time)]
        for value in printables {
            var dumped = ""
            dump(value, to: &dumped)
            for text in [String(describing: value), String(reflecting: value), dumped] {
                XCTAssertFalse(text.contains("real-secret"), text)
                XCTAssertFalse(text.contains("real-token"), text)
                XCTAssertFalse(text.contains(key), text)
                XCTAssertFalse(text.contains(plan.signed.signature), text)
            }
        }
    }
}
