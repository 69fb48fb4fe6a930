import XCTest
@testable import CountersignHTTP

/// Heads parsed one after another through one `HeadArrays`: each keeps exactly its own fields,
/// whether the head before is still held (its arrays shared) or gone (its arrays taken over).
final class HeadArraysTests: XCTestCase {
    private func request(_ text: String, _ arrays: inout HeadArrays) -> RequestHead? {
        let bytes = Wire.bytes(text)
        guard case .complete(let head, _) = bytes.withUnsafeBytes({ HeadParser.parseRequest($0, maxHeadBytes: 8192, arrays: &arrays) }) else { return nil }
        return head
    }

    func testAHeldHeadKeepsItsFieldsWhileLaterHeadsAreParsed() throws {
        var arrays = HeadArrays()
        let first = try XCTUnwrap(request("GET http://a.example/ HTTP/1.1\r\nHost: a.example\r\nAuthorization: Basic c2VjcmV0\r\n\r\n", &arrays))
        let second = try XCTUnwrap(request("GET / HTTP/1.1\r\nHost: b\r\n\r\n", &arrays))
        XCTAssertEqual(first.headers.fields, [HeaderField("Host", "a.example"), HeaderField("Authorization", "Basic c2VjcmV0")])
        XCTAssertEqual(second.headers.fields, [HeaderField("Host", "b")])
    }

    func testAHeadThatIsGoneLeavesNothingToTheNext() throws {
        var arrays = HeadArrays()
        for (index, host) in ["long-host-name.example.com", "b", ""].enumerated() {
            // Each head is dropped before the next is parsed: the next takes its arrays over.
            let extra = index == 0 ? "Cookie: id=1; theme=dark\r\nX-One: 1\r\n" : ""
            let head = try XCTUnwrap(request("GET / HTTP/1.1\r\nHost: \(host)\r\n\(extra)\r\n", &arrays))
            XCTAssertEqual(head.headers.fields.first, HeaderField("Host", host))
            XCTAssertEqual(head.headers.count, index == 0 ? 3 : 1, "no field of an earlier head shows")
            if index > 0 { XCTAssertNil(head.headers["Cookie"]) }
        }
        // A head without fields, then one with: the slots kept stay usable.
        XCTAssertEqual(try XCTUnwrap(request("GET / HTTP/1.1\r\n\r\n", &arrays)).headers.count, 0)
        XCTAssertEqual(try XCTUnwrap(request("GET / HTTP/1.1\r\nA: b\r\n\r\n", &arrays)).headers.fields, [HeaderField("A", "b")])
    }

    func testAHeadRefusedOrCutShortLeavesNoneOfItsFieldsToTheNext() throws {
        var arrays = HeadArrays()
        // Slots written for fields of heads that never became heads: refused, then incomplete.
        let refused = Wire.bytes("GET / HTTP/1.1\r\nHost: a\r\nCookie: id=1\r\nX-Two: 2\r\nBad Name: 3\r\n\r\n")
        guard case .invalid = refused.withUnsafeBytes({ HeadParser.parseRequest($0, maxHeadBytes: 8192, arrays: &arrays) }) else {
            return XCTFail("a name with a space is refused")
        }
        let cut = Wire.bytes("GET / HTTP/1.1\r\nHost: a\r\nCookie: id=1\r\nX-Two: 2\r\nX-Three: 3\r\nX-Fo")
        guard case .incomplete = cut.withUnsafeBytes({ HeadParser.parseRequest($0, maxHeadBytes: 8192, arrays: &arrays) }) else {
            return XCTFail("a head without its blank line is incomplete")
        }
        let head = try XCTUnwrap(request("GET / HTTP/1.1\r\nHost: b\r\nContent-Length: 0\r\n\r\n", &arrays))
        XCTAssertEqual(head.headers.fields, [HeaderField("Host", "b"), HeaderField("Content-Length", "0")])
        XCTAssertNil(head.headers["Cookie"])
        // More fields than the head before: the kept slots, then new ones.
        let longer = try XCTUnwrap(request("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", &arrays))
        XCTAssertEqual(longer.headers.fields, [HeaderField("A", "1"), HeaderField("B", "2"), HeaderField("C", "3")])
        XCTAssertFalse(longer.headers.contains(.contentLength))
    }

    func testAHeldHeadThatIsChangedDoesNotChangeTheNext() throws {
        var arrays = HeadArrays()
        var first = try XCTUnwrap(request("GET / HTTP/1.1\r\nHost: a\r\n\r\n", &arrays))
        first.headers.append("Via", "1.1 x")
        let second = try XCTUnwrap(request("GET / HTTP/1.1\r\nHost: b\r\n\r\n", &arrays))
        XCTAssertEqual(first.headers.fields, [HeaderField("Host", "a"), HeaderField("Via", "1.1 x")])
        XCTAssertEqual(second.headers.fields, [HeaderField("Host", "b")])
    }
}
