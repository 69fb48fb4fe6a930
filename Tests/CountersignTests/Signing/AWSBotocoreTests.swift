import Foundation
import XCTest
@testable import CountersignSigning

/// Differential test against botocore, AWS's own Python signer: aws-botocore/botocore-cases.json
/// holds the canonical request, string to sign and signature botocore computed for 240 generated
/// requests (S3 and eight other services, both forms, encoded and unicode paths and queries,
/// dot segments, repeated and untrimmed headers, session tokens, unsigned S3 payloads, binary
/// bodies); generate_botocore_cases.py beside it regenerates the file deterministically.
final class AWSBotocoreTests: XCTestCase {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("aws-botocore/botocore-cases.json")

    struct Case: Decodable {
        let name, form, service, region, method, target, payload: String
        let access_key_id, secret_access_key: String
        let session_token: String?
        let headers: [[String]]
        let body_base64: String
        let canonical_request, string_to_sign, signature: String
        let authorization: String?
        let added_headers: [String: String]?
        let expires: Int?
        let signed_query: String?
    }

    struct Document: Decodable {
        let botocore_version: String
        let time_unix: Int64
        let cases: [Case]
    }

    func testEveryBotocoreCase() throws {
        let document = try JSONDecoder().decode(Document.self, from: Data(contentsOf: Self.fixture))
        XCTAssertEqual(document.cases.count, 240)
        var passed = 0
        for botocore in document.cases {
            let before = testRun?.failureCount ?? 0
            let request = SignableRequest(method: botocore.method, scheme: "https", authority: botocore.headers[0][1], target: botocore.target,
                                          fields: botocore.headers.map { ($0[0], $0[1]) })
            let body = Array(Data(base64Encoded: botocore.body_base64)!)
            let payload = try XCTUnwrap(AWSPayloadHash(headerValue: botocore.payload), botocore.name)
            if case .sha256Hex = payload { XCTAssertEqual(payload, .of(body: body), "\(botocore.name): the hash of the body") }
            let parameters = AWSSigningParameters(
                credentials: AWSCredentials(accessKeyID: botocore.access_key_id, secretAccessKey: botocore.secret_access_key,
                                            sessionToken: botocore.session_token),
                region: botocore.region, service: botocore.service, unixTime: document.time_unix, payload: payload,
                sendsContentSHA256: botocore.form == "header" && botocore.service == "s3")
            let keys = AWSSigningKeyCache(capacity: 8)
            let signed = botocore.form == "header"
                ? try AWSSigV4Signer.signHeaders(request, parameters, keys: keys)
                : try AWSSigV4Signer.signQuery(request, parameters, expires: botocore.expires!, keys: keys)
            XCTAssertEqual(signed.canonicalRequest, botocore.canonical_request, "\(botocore.name): canonical request")
            XCTAssertEqual(signed.stringToSign, botocore.string_to_sign, "\(botocore.name): string to sign")
            XCTAssertEqual(signed.signature, botocore.signature, "\(botocore.name): signature")
            if let authorization = botocore.authorization {
                let added = Dictionary(signed.addedFields.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
                XCTAssertEqual(added["authorization"], authorization, "\(botocore.name): Authorization")
                for (name, value) in botocore.added_headers ?? [:] {
                    XCTAssertEqual(added[name.lowercased()], value, "\(botocore.name): \(name)")
                }
                XCTAssertEqual(Set(added.keys), Set((botocore.added_headers ?? [:]).keys.map { $0.lowercased() } + ["authorization"]), botocore.name)
            } else {
                // botocore re-serializes the operation's parameters and orders its own differently;
                // the same parameters, the same signature.
                let ours = try XCTUnwrap(signed.target).split(separator: "?", maxSplits: 1)[1].split(separator: "&").map(String.init).sorted()
                XCTAssertEqual(ours, botocore.signed_query!.split(separator: "&").map(String.init).sorted(), "\(botocore.name): presigned query")
            }
            if testRun?.failureCount ?? 0 == before { passed += 1 }
        }
        print("botocore \(document.botocore_version): \(passed) of \(document.cases.count) cases equal")
    }
}
