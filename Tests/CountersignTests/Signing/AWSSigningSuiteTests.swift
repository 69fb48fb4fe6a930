import Foundation
import XCTest
@testable import CountersignSigning

/// Every SigV4 case of the AWS signing test suite (awslabs/aws-c-auth, copied with its licence
/// into aws-signing-test-suite/): canonical request, string to sign, signature and the signed
/// request, in the header form and the query form, equal to the suite's byte for byte.
final class AWSSigningSuiteTests: XCTestCase {
    static let suite = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("aws-signing-test-suite/v4")

    /// A case's request.txt: the request line (whose target may hold a space), field lines with
    /// obs-fold continuations (kept raw for the signed-request comparison, unfolded for signing).
    struct SuiteRequest {
        let method: String
        let target: String
        let rawFieldLines: [String]
        let fields: [(name: String, value: String)]
        let body: [UInt8]

        init(_ text: String) {
            let (head, body) = text.range(of: "\n\n").map { (String(text[..<$0.lowerBound]), String(text[$0.upperBound...])) } ?? (text, "")
            var lines = head.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            while lines.last == "" { lines.removeLast() }
            let requestLine = lines.removeFirst()
            let firstSpace = requestLine.firstIndex(of: " ")!
            method = String(requestLine[..<firstSpace])
            target = String(requestLine[requestLine.index(after: firstSpace)...].dropLast(" HTTP/1.1".count))
            rawFieldLines = lines
            var fields: [(name: String, value: String)] = []
            for line in lines {
                if line.hasPrefix(" ") || line.hasPrefix("\t") {
                    fields[fields.count - 1].value += " " + line
                } else {
                    let colon = line.firstIndex(of: ":")!
                    fields.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
                }
            }
            self.fields = fields
            self.body = Array(body.utf8)
        }

        var signable: SignableRequest {
            SignableRequest(method: method, scheme: "https", authority: fields.first { $0.name.lowercased() == "host" }!.value,
                            target: target, fields: fields)
        }

        /// The request as the suite prints a signed one, after applying our edits.
        func applying(_ signed: AWSSignedRequest) -> String {
            var lines = ["\(method) \(signed.target ?? target) HTTP/1.1"]
            var skipping = false
            for line in rawFieldLines {
                if line.hasPrefix(" ") || line.hasPrefix("\t") {
                    if !skipping { lines.append(line) }
                    continue
                }
                skipping = signed.removedFields.contains(String(line.prefix { $0 != ":" }).lowercased())
                if !skipping { lines.append(line) }
            }
            lines += signed.addedFields.map { "\($0.name):\($0.value)" }
            return lines.joined(separator: "\n") + "\n\n" + String(decoding: body, as: UTF8.self)
        }
    }

    struct SuiteCase {
        let name: String
        let directory: URL
        let request: SuiteRequest
        let context: [String: Any]

        func file(_ name: String) throws -> String { try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8) }

        func parameters(form: String) -> AWSSigningParameters {
            let credentials = context["credentials"] as! [String: String]
            let signBody = context["sign_body"] as? Bool ?? false
            let omitToken = context["omit_session_token"] as? Bool ?? false
            let time = ISO8601DateFormatter().date(from: context["timestamp"] as! String)!
            return AWSSigningParameters(
                credentials: AWSCredentials(accessKeyID: credentials["access_key_id"]!, secretAccessKey: credentials["secret_access_key"]!,
                                            sessionToken: credentials["token"]),
                region: context["region"] as! String, service: context["service"] as! String, unixTime: Int64(time.timeIntervalSince1970),
                payload: .of(body: request.body), pathEncoding: (context["normalize"] as? Bool ?? true) ? .normalizedAndEncoded : .encoded,
                sendsContentSHA256: form == "header" && signBody, sessionTokenPlacement: omitToken ? .appendedAfterSigning : .signed)
        }
    }

    static func cases() throws -> [SuiteCase] {
        try FileManager.default.contentsOfDirectory(atPath: suite.path).sorted().map { name in
            let directory = suite.appendingPathComponent(name)
            let context = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("context.json"))) as! [String: Any]
            let request = SuiteRequest(try String(contentsOf: directory.appendingPathComponent("request.txt"), encoding: .utf8))
            return SuiteCase(name: name, directory: directory, request: request, context: context)
        }
    }

    /// Lower-cases field names (the suite writes `x-amz-content-sha256` in one place, `X-Amz-Date`
    /// in another) and drops trailing blank lines.
    static func normalized(_ signedRequest: String) -> String {
        var lines = signedRequest.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while lines.last == "" { lines.removeLast() }
        var inHead = true
        return lines.enumerated().map { index, line in
            if line.isEmpty { inHead = false }
            guard inHead, index > 0, let colon = line.firstIndex(of: ":"), !line.hasPrefix(" ") else { return line }
            return line[..<colon].lowercased() + line[colon...]
        }.joined(separator: "\n")
    }

    private func check(form: String) throws -> Int {
        var passed = 0
        let cases = try Self.cases()
        XCTAssertEqual(cases.count, 38, "every v4 case of the suite is present")
        for suiteCase in cases {
            let parameters = suiteCase.parameters(form: form)
            let expires = suiteCase.context["expiration_in_seconds"] as? Int ?? 3600
            let signed = try form == "header"
                ? AWSSigV4Signer.signHeaders(suiteCase.request.signable, parameters, keys: AWSSigningKeyCache(capacity: 4))
                : AWSSigV4Signer.signQuery(suiteCase.request.signable, parameters, expires: expires, keys: AWSSigningKeyCache(capacity: 4))
            let before = testRun?.failureCount ?? 0
            XCTAssertEqual(signed.canonicalRequest, try suiteCase.file("\(form)-canonical-request.txt"), "\(suiteCase.name) \(form) canonical request")
            XCTAssertEqual(signed.stringToSign, try suiteCase.file("\(form)-string-to-sign.txt"), "\(suiteCase.name) \(form) string to sign")
            XCTAssertEqual(signed.signature, try suiteCase.file("\(form)-signature.txt"), "\(suiteCase.name) \(form) signature")
            XCTAssertEqual(Self.normalized(suiteCase.request.applying(signed)), Self.normalized(try suiteCase.file("\(form)-signed-request.txt")),
                           "\(suiteCase.name) \(form) signed request")
            if testRun?.failureCount ?? 0 == before { passed += 1 }
        }
        return passed
    }

    func testHeaderFormOfEveryCase() throws {
        let passed = try check(form: "header")
        print("AWS signing suite, header form: \(passed) of 38 v4 cases equal")
        XCTAssertEqual(passed, 38)
    }

    func testQueryFormOfEveryCase() throws {
        let passed = try check(form: "query")
        print("AWS signing suite, query form: \(passed) of 38 v4 cases equal")
        XCTAssertEqual(passed, 38)
    }
}
