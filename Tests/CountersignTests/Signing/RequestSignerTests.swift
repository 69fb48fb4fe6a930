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
}
