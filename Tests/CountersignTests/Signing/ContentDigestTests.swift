import XCTest
@testable import CountersignSigning

/// RFC 9530's examples: the content `{"hello": "world"}` (§B and throughout), whole and fed in
/// pieces, and the strongest known digest picked from a field that also names others.
final class ContentDigestTests: XCTestCase {
    let content = Array(#"{"hello": "world"}"#.utf8)

    func testTheRFCsDigestsOfHelloWorld() {
        XCTAssertEqual(ContentDigester.fieldValue(of: content, .sha256), "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:")
        XCTAssertEqual(ContentDigester.fieldValue(of: content, .sha512),
                       "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:")
    }

    func testPiecesHashLikeTheWhole() {
        let digester = ContentDigester(.sha256)
        for index in content.indices { digester.update([content[index]]) }
        XCTAssertEqual(ContentDigester.fieldValue(digest: digester.finish(), .sha256), ContentDigester.fieldValue(of: content, .sha256))
    }

    func testTheStrongestKnownDigestIsCheckedAndUnknownOnesIgnored() throws {
        let field = "unixsum=:AAAA:, sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:"
        let claim = try XCTUnwrap(ContentDigestClaim.strongest(in: field))
        XCTAssertEqual(claim.algorithm, .sha256)
        let digester = ContentDigester(.sha256)
        digester.update(content)
        XCTAssertTrue(claim.matches(digester.finish()))
        XCTAssertNil(try ContentDigestClaim.strongest(in: "md5=:AAAA:"))
        XCTAssertThrowsError(try ContentDigestClaim.strongest(in: "sha-256=X48E"))
    }
}
