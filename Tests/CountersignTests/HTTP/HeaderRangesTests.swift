import XCTest
@testable import CountersignHTTP

/// Heads as byte ranges: a parsed head keeps the bytes it was sent, edits are spliced in, and
/// the String API reads the same fields as before.
final class HeaderRangesTests: XCTestCase {
    func testEditedHeadIsWrittenFromTheReceivedBytesWithTheChangesSpliced() throws {
        // (A second Host line is refused by the parser, RFC 9112 §3.2: X-Dup is the repeated field.)
        let raw = "GET http://a.example/x HTTP/1.1\r\nhOsT: a.example\r\nX-Latin: caf\u{E9} \u{FF}\r\nX-Dup: 1\r\nConnection: close, X-Drop\r\n" +
            "X-Drop: 1\r\nTE: trailers\r\nAccept:  */*  \r\nx-dup: 2\r\n\r\n"
        guard case .complete(var head, _) = Wire.request(Wire.bytes(raw)) else { return XCTFail("not parsed") }
        XCTAssertEqual(head.headers["HOST"], "a.example")
        XCTAssertEqual(head.headers["x-latin"], "caf\u{E9} \u{FF}")
        XCTAssertEqual(head.headers.values("X-DUP"), ["1", "2"])
        XCTAssertTrue(head.headers.listContains("connection", token: "CLOSE"))
        HopByHop.strip(&head.headers)
        head.headers.replaceOrAppend("Host", "b.example")
        head.headers.append("Via", "1.1 countersign")
        let written = HeadSerializer.request(method: head.method, target: head.target, headers: head.headers)
        XCTAssertEqual(written, Wire.bytes("GET http://a.example/x HTTP/1.1\r\nhOsT: b.example\r\nX-Latin: caf\u{E9} \u{FF}\r\nX-Dup: 1\r\n" +
                                           "Accept: */*\r\nx-dup: 2\r\nVia: 1.1 countersign\r\n\r\n"))
        // The same fields built from Strings are equal to the parsed ones.
        XCTAssertEqual(head.headers, HeaderFields([HeaderField("hOsT", "b.example"), HeaderField("X-Latin", "caf\u{E9} \u{FF}"),
                                                   HeaderField("X-Dup", "1"), HeaderField("Accept", "*/*"), HeaderField("x-dup", "2"),
                                                   HeaderField("Via", "1.1 countersign")]))
        XCTAssertEqual(head.headers.map(\.name), ["hOsT", "X-Latin", "X-Dup", "Accept", "x-dup", "Via"])
    }
}
