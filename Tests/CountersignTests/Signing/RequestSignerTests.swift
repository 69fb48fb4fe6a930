import XCTest
import CountersignHTTP
@testable import CountersignSigning

/// The head Countersign sends to a signing host: read back, signed over exactly what it
/// carries, and our label's members only replaced.
final class RequestSignerTests: XCTestCase {
    private func signer(_ components: [String]) throws -> RequestSigner {
        try RequestSigner(key: MessageSigningKey(sharedSecret: Array("secret".utf8)), keyID: "k", label: "sig1",
                          components: components.map(SignatureComponent.parse), digest: .sha256, expiresIn: 300, nonce: true, tag: "t")
    }

    private func head(_ fields: [(String, String)]) -> [UInt8] {
        HeadSerializer.request(method: "POST", target: "/a?b=1", headers: HeaderFields(fields.map { HeaderField($0.0, $0.1) }))
    }

    private func parse(_ bytes: [UInt8]) throws -> RequestHead {
        guard case .complete(let parsed, _) = bytes.withUnsafeBytes({ HeadParser.parseRequest($0, maxHeadBytes: 65536) }) else {
            throw XCTSkip("unparsable")
        }
        return parsed
    }

    func testTheSignatureCoversWhatIsSentAndLeavesOutWhatIsNot() throws {
        let signed = try parse(signer(["@method", "@authority", "@path", "content-type", "x-absent"])
            .sign(head: head([("Host", "api.example.com"), ("Content-Type", "text/plain")]), scheme: "https", authority: "api.example.com",
                  originTarget: "/a?b=1", now: 1_700_000_000))
        let input = try XCTUnwrap(signed.headers["Signature-Input"])
        XCTAssertTrue(input.hasPrefix(#"sig1=("@method" "@authority" "@path" "content-type");created=1700000000;expires=1700000300;nonce=""#), input)
        XCTAssertTrue(input.hasSuffix(#";alg="hmac-sha256";keyid="k";tag="t""#), input)
        // Our own verifier agrees with the signer over the head as received.
        let fields = signed.headers.fields.map { (name: $0.name, value: $0.value) }
        let message = SignableRequest(method: "POST", scheme: "https", authority: "api.example.com", target: "/a?b=1", fields: fields)
        let verified = MessageVerifier.verify(.request(message), key: try MessageVerifyingKey(sharedSecret: Array("secret".utf8)), keyID: "k",
                                              requirements: VerificationRequirements(requiredComponents: [], maxAge: 60), now: 1_700_000_010)
        XCTAssertEqual(try verified.get(), "sig1")
    }

    func testAClientsMembersUnderOurLabelAreReplacedAndItsOthersKept() throws {
        let client = head([("Host", "h"), ("Signature-Input", #"sig1=("@method");created=1, own=("@path");created=2"#),
                           ("Signature", "sig1=:AAAA:, own=:BBBB:")])
        let signed = try parse(signer(["@method"]).sign(head: client, scheme: "https", authority: "h", originTarget: "/a?b=1", now: 5))
        let inputs = try StructuredFieldParser.parseDictionary(signed.headers.values("Signature-Input").joined(separator: ", "))
        let signatures = try StructuredFieldParser.parseDictionary(signed.headers.values("Signature").joined(separator: ", "))
        XCTAssertEqual(inputs.keys, ["own", "sig1"])
        XCTAssertEqual(signatures.keys, ["own", "sig1"])
        XCTAssertEqual(try StructuredFieldSerializer.serialize(XCTUnwrap(inputs["own"])), #"("@path");created=2"#)
        XCTAssertNotEqual(try StructuredFieldSerializer.serialize(XCTUnwrap(signatures["sig1"])), ":AAAA:")
    }

    func testComponentsThatCannotBeSignedAreRefusedUpFront() {
        for text in [#""content-type";tr"#, #""cache-control";sf"#, "@nonsense", "Content-Type", #""@query-param""#, #""@method";name="x""#] {
            XCTAssertThrowsError(try SignatureComponent.parse(text), text)
        }
    }

    /// The byte-level plan and the general path (parse, `SignatureBase`) sign the same head into
    /// the same bytes: same base, same `Signature-Input`, same HMAC.
    func testThePlanSignsExactlyAsTheGeneralPath() throws {
        let componentSets = [
            ["@method", "@authority", "@scheme", "@target-uri", "@request-target", "@path", "@query", "content-type", "x-absent"],
            ["x-multi", "@method"],
            ["@query", "@path"],
        ]
        let heads: [(target: String, authority: String, scheme: String, fields: [(String, String)])] = [
            ("/a?b=1&c", "API.Example.com:443", "https", [("Host", "API.Example.com"), ("Content-Type", "text/plain ")]),
            ("/", "h:8080", "http", [("Host", "h:8080"), ("X-Multi", "one"), ("x-multi", " two\t"), ("X-MULTI", "")]),
            ("/p", "h:80", "HTTP", [("Host", "h")]),
        ]
        for components in componentSets {
            let signer = try signer(components)
            XCTAssertNotNil(signer.plan, "\(components)")
            for head in heads {
                let bytes = HeadSerializer.request(method: "PUT", target: head.target, headers: HeaderFields(head.fields.map { HeaderField($0.0, $0.1) }))
                let nonce = Array(0..<16 as Range<UInt8>)
                let planned = try XCTUnwrap(signer.plan?.signedHead(bytes, scheme: head.scheme, authority: head.authority, originTarget: head.target,
                                                                     created: 1_700_000_000, expires: 1_700_000_300, nonce: nonce, key: signer.key))
                let general = try signer.signParsing(head: bytes, scheme: head.scheme, authority: head.authority, originTarget: head.target,
                                                     now: 1_700_000_000, nonce: nonce)
                XCTAssertEqual(String(decoding: planned, as: UTF8.self), String(decoding: general, as: UTF8.self), "\(components) \(head.target)")
            }
        }
    }

    func testComponentsTheBytesCannotServeAndClientSignaturesTakeTheGeneralPath() throws {
        XCTAssertNil(try signer(["@method", #""@query-param";name="b""#]).plan)
        XCTAssertNil(try signer([#""content-digest";sf"#]).plan)
        XCTAssertNil(try signer(["@method", "@method"]).plan)
        let plan = try XCTUnwrap(signer(["@method"]).plan)
        let client = head([("Host", "h"), ("signature", "own=:AAAA:")])
        XCTAssertNil(try plan.signedHead(client, scheme: "https", authority: "h", originTarget: "/", created: 1, expires: nil, nonce: nil,
                                         key: MessageSigningKey(sharedSecret: [1])))
    }
}
