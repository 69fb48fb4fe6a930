import XCTest
import CountersignSupport
@testable import CountersignSigning

/// aws-chunked streaming: the chunk-signature chain against AWS's published S3 examples
/// ("Transferring Payload in Multiple Chunks": seed 4f232c43…, three chunk signatures; "Including
/// Trailing Headers": seed 106e2a8a…, chunk and trailer signatures), the re-framer, and a strict
/// parser refusing what a hostile client would send.
final class AWSChunkedTests: XCTestCase {
    /// 2013-05-24T00:00:00Z, the examples' time.
    static let exampleTime: Int64 = 1_369_353_600
    static let credentials = AWSCredentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    static let data = [UInt8](repeating: UInt8(ascii: "a"), count: 66_560)

    /// The example's PUT, headers as the documentation lists them.
    static let exampleRequest = SignableRequest(method: "PUT", scheme: "https", authority: "s3.amazonaws.com",
                                                target: "/examplebucket/chunkObject.txt", fields: [
        ("Host", "s3.amazonaws.com"), ("x-amz-date", "20130524T000000Z"), ("x-amz-storage-class", "REDUCED_REDUNDANCY"),
        ("Authorization", "AWS4-HMAC-SHA256 Credential=PLACEHOLDER/20130524/us-east-1/s3/aws4_request, SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class, Signature=0000000000000000000000000000000000000000000000000000000000000000"),
        ("x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"), ("Content-Encoding", "aws-chunked"),
        ("x-amz-decoded-content-length", "66560"), ("Content-Length", "66824"),
    ])

    static let chunkSignatures = ["ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
                                  "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
                                  "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"]

    private func signer(seed: String) -> AWSChunkSigner {
        let scope = AWSCredentialScope(date: "20130524", region: "us-east-1", service: "s3")
        return AWSChunkSigner(signingKey: AWSSigningKey.derive(secret: Array("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".utf8), scope: scope),
                              timestamp: AWSTimestamp(unixSeconds: Self.exampleTime), scope: scope, seedSignature: seed)
    }

    /// Re-signing the SDK's placeholder-signed streaming PUT gives the documentation's seed, and
    /// its chunk signer the documentation's three chunk signatures.
    func testSeedAndChunkSignaturesAreAWSsExample() throws {
        let plan = try AWSResigner.resign(Self.exampleRequest, credentials: Self.credentials, region: "us-east-1", service: "s3",
                                          unixTime: Self.exampleTime, payload: .signed(.of(body: [])), keys: AWSSigningKeyCache(capacity: 2))
        XCTAssertEqual(plan.payload, .streamingSigned, "an aws-chunked body keeps its streaming mode whatever payload says")
        XCTAssertEqual(plan.signed.signature, "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9")
        var chain = plan.signed.chunkSigner()
        XCTAssertEqual(try chain.signChunk(Array(Self.data[..<65_536])), Self.chunkSignatures[0])
        XCTAssertEqual(try chain.signChunk(Array(Self.data[65_536...])), Self.chunkSignatures[1])
        XCTAssertEqual(try chain.signChunk([]), Self.chunkSignatures[2])
        XCTAssertThrowsError(try chain.signChunk([1]), "nothing is signed after the final chunk")
    }

    /// The trailer example: its chunk chain from its seed, then the trailer signature over
    /// `x-amz-checksum-crc32c:sOO8/Q==`.
    func testTrailerSignatureIsAWSsExample() throws {
        var chain = signer(seed: "106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e")
        XCTAssertThrowsError(try chain.signTrailer([("x-amz-checksum-crc32c", "sOO8/Q==")]), "no trailer before the final chunk")
        XCTAssertEqual(try chain.signChunk(Array(Self.data[..<65_536])), "b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2")
        XCTAssertEqual(try chain.signChunk(Array(Self.data[65_536...])), "1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7")
        XCTAssertEqual(try chain.signChunk([]), "2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992")
        XCTAssertEqual(try chain.signTrailer([("x-amz-checksum-crc32c", "sOO8/Q==")]), "d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435")
    }

    static func framed(_ signatures: [String], trailer: String = "") -> [UInt8] {
        Array("10000;chunk-signature=\(signatures[0])\r\n".utf8) + Array(data[..<65_536]) + Array("\r\n400;chunk-signature=\(signatures[1])\r\n".utf8)
            + Array(data[65_536...]) + Array("\r\n0;chunk-signature=\(signatures[2])\r\n\(trailer)\r\n".utf8)
    }

    /// The SDK's body, chunk-signed with its placeholder key, comes out with AWS's signatures, the
    /// same length (66 824 bytes, the example's Content-Length), whichever way it is cut up.
    func testResignerRewritesEveryChunkSignatureKeepingTheLength() throws {
        let placeholder = String(repeating: "0", count: 64)
        let input = Self.framed([placeholder, placeholder, placeholder])
        let expected = Self.framed(Self.chunkSignatures)
        XCTAssertEqual(expected.count, 66_824)
        let plan = try AWSResigner.resign(Self.exampleRequest, credentials: Self.credentials, region: "us-east-1", service: "s3",
                                          unixTime: Self.exampleTime, payload: .unsigned, keys: AWSSigningKeyCache(capacity: 2))
        for piece in [1, 7, 4096, 70_000] {
            var resigner = try AWSChunkedResigner(mode: plan.payload, signed: plan.signed, maximumChunkBytes: 65_536)
            var out: [UInt8] = []
            var offset = 0
            while offset < input.count {
                let end = min(offset + piece, input.count)
                out += try resigner.feed(input[offset..<end])
                offset = end
            }
            XCTAssertTrue(resigner.isComplete)
            XCTAssertEqual(out, expected, "cut into pieces of \(piece)")
        }
    }

    /// The trailer form: chunk signatures and the trailer signature replaced, the checksum
    /// trailer passed as sent.
    func testResignerSignsTheTrailer() throws {
        let placeholder = String(repeating: "f", count: 64)
        let input = Self.framed([placeholder, placeholder, placeholder], trailer: "x-amz-checksum-crc32c:sOO8/Q==\r\nx-amz-trailer-signature:\(placeholder)\r\n")
        let scope = AWSCredentialScope(date: "20130524", region: "us-east-1", service: "s3")
        let signed = AWSSignedRequest(removedFields: [], addedFields: [], target: nil,
                                      signature: "106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e",
                                      timestamp: AWSTimestamp(unixSeconds: Self.exampleTime), scope: scope,
                                      signingKey: AWSSigningKey.derive(secret: Array("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".utf8), scope: scope),
                                      canonicalRequest: "", stringToSign: "")
        var resigner = try AWSChunkedResigner(mode: .streamingSignedWithTrailer, signed: signed, maximumChunkBytes: 65_536)
        let out = try resigner.feed(input)
        XCTAssertEqual(out, Self.framed(["b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2",
                                         "1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7",
                                         "2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992"],
                                        trailer: "x-amz-checksum-crc32c:sOO8/Q==\r\nx-amz-trailer-signature:d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435\r\n"))
    }

    /// A `-TRAILER` body whose client sent no trailing field and no trailer signature gets none
    /// added: the body's length is the client's.
    func testSignedTrailerModeWithoutTrailerKeepsItsLength() throws {
        let placeholder = String(repeating: "0", count: 64)
        let input = Array("5;chunk-signature=\(placeholder)\r\nhello\r\n0;chunk-signature=\(placeholder)\r\n\r\n".utf8)
        let plan = try AWSResigner.resign(Self.exampleRequest, credentials: Self.credentials, region: "us-east-1", service: "s3",
                                          unixTime: Self.exampleTime, payload: .unsigned)
        var resigner = try AWSChunkedResigner(mode: .streamingSignedWithTrailer, signed: plan.signed, maximumChunkBytes: 1024)
        let out = try resigner.feed(input)
        XCTAssertEqual(out.count, input.count)
        XCTAssertFalse(String(decoding: out, as: UTF8.self).contains(placeholder))
        XCTAssertTrue(resigner.isComplete)
    }

    /// boto3 ≥ 1.36's default upload: unsigned chunks and a checksum trailer, passed unchanged.
    func testUnsignedTrailerBodyPassesUnchanged() throws {
        let body = Array("5\r\nhello\r\n0\r\nx-amz-checksum-crc32:NhCmhg==\r\n\r\n".utf8)
        var parser = try AWSChunkedParser(mode: .streamingUnsignedWithTrailer, maximumChunkBytes: 1024)
        XCTAssertEqual(try parser.feed(body), [.chunk(sizeText: "5", data: Array("hello".utf8)), .finalChunk(sizeText: "0"),
                                               .trailer(line: "x-amz-checksum-crc32:NhCmhg==", name: "x-amz-checksum-crc32", value: "NhCmhg=="), .end])
        let plan = try AWSResigner.resign(SignableRequest(method: "PUT", scheme: "https", authority: "b.s3.amazonaws.com", target: "/k", fields: [
            ("Host", "b.s3.amazonaws.com"), ("X-Amz-Content-Sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER"), ("Content-Encoding", "aws-chunked"),
            ("X-Amz-Trailer", "x-amz-checksum-crc32"), ("X-Amz-Decoded-Content-Length", "5"),
        ]), credentials: Self.credentials, region: "us-east-1", service: "s3", unixTime: Self.exampleTime, payload: .signed(.emptyBody))
        XCTAssertEqual(plan.payload, .streamingUnsignedWithTrailer)
        XCTAssertTrue(plan.signed.addedFields.contains { $0 == ("X-Amz-Content-Sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER") })
        var resigner = try AWSChunkedResigner(mode: plan.payload, signed: plan.signed, maximumChunkBytes: 1024)
        XCTAssertEqual(try resigner.feed(body), body)
    }

    /// What a hostile client sends to make the proxy hold too much, sign something it did not
    /// parse, or smuggle bytes past the end: each refused with a reason.
    func testParserRefusesHostileFraming() throws {
        let signature = String(repeating: "a", count: 64)
        let cases: [(String, AWSPayloadHash, String)] = [
            ("a chunk over the bound", .streamingSigned, "401;chunk-signature=\(signature)\r\n"),
            ("a size overflowing", .streamingSigned, "ffffffffffffffffff;chunk-signature=\(signature)\r\n"),
            ("a negative size", .streamingSigned, "-1;chunk-signature=\(signature)\r\n"),
            ("no signature in a signed body", .streamingSigned, "5\r\nhello\r\n"),
            ("a short signature", .streamingSigned, "5;chunk-signature=abc\r\n"),
            ("an upper-case signature", .streamingSigned, "5;chunk-signature=\(signature.uppercased())\r\n"),
            ("a second extension", .streamingSigned, "5;chunk-signature=\(signature);x=y\r\n"),
            ("a signature in an unsigned body", .streamingUnsignedWithTrailer, "5;chunk-signature=\(signature)\r\n"),
            ("a bare LF", .streamingUnsignedWithTrailer, "5\nhello\r\n"),
            ("data longer than its size", .streamingUnsignedWithTrailer, "2\r\nhello\r\n"),
            ("an endless size line", .streamingUnsignedWithTrailer, String(repeating: "0", count: 200)),
            ("bytes after the end", .streamingUnsignedWithTrailer, "0\r\n\r\nGET / HTTP/1.1\r\n"),
            ("a trailer in a body without one", .streamingSigned, "0;chunk-signature=\(signature)\r\nx-amz-checksum-crc32:AAAA\r\n\r\n"),
            ("a trailer without its signature", .streamingSignedWithTrailer, "0;chunk-signature=\(signature)\r\nx-amz-checksum-crc32:AAAA\r\n\r\n"),
            ("a field after the trailer signature", .streamingSignedWithTrailer,
             "0;chunk-signature=\(signature)\r\nx-amz-trailer-signature:\(signature)\r\nx-amz-checksum-crc32:AAAA\r\n\r\n"),
            ("a trailer name with a space", .streamingUnsignedWithTrailer, "0\r\nx amz:1\r\n\r\n"),
            ("a huge trailer", .streamingUnsignedWithTrailer, "0\r\nx-a:" + String(repeating: "b", count: 9000) + "\r\n\r\n"),
            ("many trailers", .streamingUnsignedWithTrailer, "0\r\n" + String(repeating: "x-a:1\r\n", count: 17) + "\r\n"),
        ]
        for (why, mode, body) in cases {
            var parser = try AWSChunkedParser(mode: mode, maximumChunkBytes: 1024)
            XCTAssertThrowsError(try parser.feed(Array(body.utf8)), why)
        }
        XCTAssertThrowsError(try AWSChunkedParser(mode: .unsigned, maximumChunkBytes: 1024), "not an aws-chunked mode")
    }
}
