import XCTest
@testable import CountersignHTTP

/// What a client experiences when its request head reaches the proxy: accepted and read
/// exactly as sent, or refused with the status RFC 9112 calls for.
final class RequestHeadParserTests: XCTestCase {
    private let simple = "GET http://example.com/a?b=c HTTP/1.1\r\nHost: example.com\r\nUser-Agent: curl/8\r\n\r\n"

    // MARK: - Accepted

    func testParsesRequestLineAndFields() throws {
        let head = try XCTUnwrap(acceptRequest(simple))
        XCTAssertEqual(head.method, "GET")
        XCTAssertEqual(head.target, "http://example.com/a?b=c")
        XCTAssertEqual(head.version, .http11)
        XCTAssertEqual(head.headers.fields, [HeaderField("Host", "example.com"), HeaderField("User-Agent", "curl/8")])
    }

    /// The target is kept as the bytes it came in, beside the fields (no String is made of it
    /// while a request is forwarded): it reads as sent, a head made in code with the same
    /// parts equals it, and the fields neither hold it nor are changed by it.
    func testTheTargetReadsAsSentAndIsNoneOfTheFields() throws {
        let head = try XCTUnwrap(acceptRequest("GET http://h.example/countersign:x?q HTTP/1.1\r\nHost: h.example\r\nX-A: 1\r\n\r\n"))
        XCTAssertEqual(head.target, "http://h.example/countersign:x?q")
        XCTAssertEqual(head.targetText.withBytes { String(decoding: $0, as: UTF8.self) }, head.target)
        XCTAssertEqual(head, RequestHead(method: "GET", target: "http://h.example/countersign:x?q",
                                         headers: HeaderFields([HeaderField("Host", "h.example"), HeaderField("X-A", "1")])))
        XCTAssertFalse(head.headers.storageContains(Array("countersign".utf8)), "the fields do not hold the target")
        XCTAssertEqual(head.headers.fields, [HeaderField("Host", "h.example"), HeaderField("X-A", "1")])

        var appended = head
        appended.headers.append("X-C", "3")
        XCTAssertEqual(appended.headers.fields.map(\.name), ["Host", "X-A", "X-C"])
        XCTAssertEqual(appended.target, head.target)

        var changed = head
        changed.headers = HeaderFields([HeaderField("Host", "other")])
        changed.headers.append("X-B", "2")
        XCTAssertEqual(changed.target, head.target, "the target outlives the fields it came with")
        changed.target = "/elsewhere"
        XCTAssertEqual(changed.target, "/elsewhere")
        XCTAssertEqual(head.target, "http://h.example/countersign:x?q")

        let bare = try XCTUnwrap(acceptRequest("GET /no-fields HTTP/1.0\r\n\r\n"))
        XCTAssertEqual(bare.target, "/no-fields")
    }

    /// A worker reads every request head into the arrays the one before left (`HeadArrays`):
    /// a head still being served keeps its target and fields when the next one is read.
    func testATargetOutlivesTheNextHeadReadIntoTheSameArrays() throws {
        var arrays = HeadArrays()
        func parse(_ text: String) throws -> RequestHead {
            guard case .complete(let head, _) = Wire.bytes(text).withUnsafeBytes({
                HeadParser.parseRequest($0, maxHeadBytes: 65536, arrays: &arrays)
            }) else { throw XCTSkip("not parsed") }
            return head
        }
        let first = try parse("GET http://a.example/first HTTP/1.1\r\nHost: a.example\r\n\r\n")
        let second = try parse("POST http://b.example/the-second-one HTTP/1.1\r\nHost: b.example\r\nContent-Length: 0\r\n\r\n")
        XCTAssertEqual(first.target, "http://a.example/first")
        XCTAssertEqual(first.headers.fields, [HeaderField("Host", "a.example")])
        XCTAssertEqual(second.target, "http://b.example/the-second-one")
        XCTAssertEqual(second.headers["Content-Length"], "0")
    }

    func testConsumedStopsAtTheBlankLineSoPipelinedBytesRemain() {
        let next = "POST / HTTP/1.1\r\n"
        switch Wire.request(Wire.bytes(simple + "hello" + next)) {
        case .complete(_, let consumed): XCTAssertEqual(consumed, simple.utf8.count)
        default: XCTFail("expected the first head")
        }
    }

    func testHTTP10IsServed() throws {
        let head = try XCTUnwrap(acceptRequest("GET / HTTP/1.0\r\n\r\n"))
        XCTAssertEqual(head.version, .http10)
        XCTAssertTrue(head.headers.fields.isEmpty)
    }

    func testLeadingEmptyLinesBeforeTheRequestLineAreIgnored() throws {
        let one = try XCTUnwrap(acceptRequest("\r\n" + simple))
        XCTAssertEqual(one.method, "GET")
        let two = try XCTUnwrap(acceptRequest("\r\n\r\n" + simple))
        XCTAssertEqual(two.target, "http://example.com/a?b=c")
    }

    func testOptionalWhitespaceAroundValuesIsTrimmed() throws {
        let head = try XCTUnwrap(acceptRequest("GET / HTTP/1.1\r\nHost:example.com\r\nX-A: \t  padded value \t \r\nX-B:\t\r\n\r\n"))
        XCTAssertEqual(head.headers["Host"], "example.com")
        XCTAssertEqual(head.headers["X-A"], "padded value", "inner whitespace stays, outer OWS goes")
        XCTAssertEqual(head.headers["X-B"], "", "an empty value is allowed")
    }

    func testHeaderNamesKeepTheirCaseAndOrderIncludingDuplicates() throws {
        let head = try XCTUnwrap(acceptRequest(
            "GET / HTTP/1.1\r\nhOsT: a\r\nX-LEGACY-Thing: 1\r\ncookie: x=1\r\nCookie: y=2\r\naccept: */*\r\n\r\n"))
        XCTAssertEqual(head.headers.fields.map(\.name), ["hOsT", "X-LEGACY-Thing", "cookie", "Cookie", "accept"])
        XCTAssertEqual(head.headers.values("COOKIE"), ["x=1", "y=2"])
        XCTAssertEqual(head.headers["host"], "a", "lookups ignore case")
    }

    func testObsTextInAValueIsAcceptedAsLatin1() throws {
        let head = try XCTUnwrap(acceptRequest("GET / HTTP/1.1\r\nX-Name: caf\u{E9} \u{FF}\u{80}\r\n\r\n"))
        XCTAssertEqual(head.headers["X-Name"], "caf\u{E9} \u{FF}\u{80}")
    }

    func testAllTokenCharactersAreValidInNamesAndMethods() throws {
        let token = "!#$%&'*+-.^_`|~09AZaz"
        let head = try XCTUnwrap(acceptRequest("\(token) / HTTP/1.1\r\n\(token): v\r\n\r\n"))
        XCTAssertEqual(head.method, token)
        XCTAssertEqual(head.headers.fields.first?.name, token)
    }

    func testVisibleCharactersAndTabInsideAValueAreAccepted() throws {
        let head = try XCTUnwrap(acceptRequest("GET / HTTP/1.1\r\nX-V: a\tb \"q\" ~ :;,\r\n\r\n"))
        XCTAssertEqual(head.headers["X-V"], "a\tb \"q\" ~ :;,")
    }

    func testMinorVersionsOfHTTP1AreAccepted() throws {
        let head = try XCTUnwrap(acceptRequest("GET / HTTP/1.2\r\n\r\n"))
        XCTAssertEqual(head.version, HTTPVersion(major: 1, minor: 2))
    }

    // MARK: - Incomplete

    func testEveryProperPrefixOfAValidRequestIsIncomplete() {
        let raw = Wire.bytes("\r\nPOST http://example.com/upload HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\nX-Obs: \u{E9}\r\n\r\n")
        for length in 0..<raw.count {
            let prefix = Array(raw.prefix(length))
            guard case .incomplete = Wire.request(prefix) else {
                XCTFail("prefix of \(length) bytes should be incomplete: \(String(decoding: prefix, as: UTF8.self).debugDescription)")
                return
            }
        }
        guard case .complete(_, let consumed) = Wire.request(raw) else { return XCTFail("the whole request should parse") }
        XCTAssertEqual(consumed, raw.count)
    }

    func testEveryProperPrefixOfAValidResponseIsIncomplete() {
        let raw = Wire.bytes("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n")
        for length in 0..<raw.count {
            guard case .incomplete = Wire.response(Array(raw.prefix(length))) else {
                return XCTFail("response prefix of \(length) bytes should be incomplete")
            }
        }
    }

    // MARK: - Refused: line structure

    func testBareLFIsRefusedAnywhereInTheHead() {
        refuseRequest("GET / HTTP/1.1\nHost: a\r\n\r\n", .bareLF)
        refuseRequest("GET / HTTP/1.1\r\nHost: a\n\r\n", .bareLF)
        refuseRequest("GET / HTTP/1.1\r\nHost: a\r\n\n", .bareLF)
        refuseRequest("GET / HTTP/1.1\r\nX: a\nb\r\n\r\n", .bareLF)
    }

    func testBareCRIsRefusedAnywhereInTheHead() {
        refuseRequest("GET / HTTP/1.1\rHost: a\r\n\r\n", .bareCR)
        refuseRequest("GET / HTTP/1.1\r\nX: a\rb\r\n\r\n", .bareCR)
        refuseRequest("GET / HTTP/1.1\r\nHost: a\r\n\r\r\n", .bareCR)
    }

    /// Field lines are checked in the same walk that finds the lines, but a head with several
    /// faults still gets the error of the first check: line structure, then the request line,
    /// then the first bad field; and a bad field line before the head ends waits for its end.
    func testAHeadWithSeveralFaultsGetsTheErrorOfTheFirstCheck() {
        refuseRequest("GET / HTTP/1.1\r\nBad Name: a\r\nX: b\nc\r\n\r\n", .bareLF)
        refuseRequest("GET / HTTP/1.1\r\nX: \u{1}\r\nY: b\rc\r\n\r\n", .bareCR)
        refuseRequest("GET / HTTP/9.1\r\nBad Name: a\r\n\r\n", .unsupportedVersion, status: 505)
        refuseRequest("GET / HTTP/1.1\r\nX : a\r\nY: \u{7F}\r\n\r\n", .whitespaceBeforeColon)
        guard case .incomplete = Wire.request(Wire.bytes("GET / HTTP/1.1\r\nBad Name: a\r\nX: b\r\n")) else {
            return XCTFail("a head that has not ended is still incomplete")
        }
    }

    func testBareCRIsRefusedAsSoonAsTheFollowingByteArrives() {
        refuseRequest("GET / HTTP/1.1\r\nX: a\rb", .bareCR)
    }

    func testObsoleteLineFoldingIsRefused() {
        refuseRequest("GET / HTTP/1.1\r\nX-Long: first\r\n second\r\n\r\n", .obsoleteLineFolding)
        refuseRequest("GET / HTTP/1.1\r\nX-Long: first\r\n\tsecond\r\n\r\n", .obsoleteLineFolding)
    }

    func testWhitespaceBetweenStartLineAndFirstFieldIsRefused() {
        refuseRequest("GET / HTTP/1.1\r\n Host: a\r\n\r\n", .obsoleteLineFolding)
    }

    func testLeadingEmptyLinesAloneAreNotARequest() {
        guard case .incomplete = Wire.request(Wire.bytes("\r\n\r\n")) else {
            return XCTFail("empty lines should be skipped while waiting for a request line")
        }
    }

    // MARK: - Refused: field lines

    func testWhitespaceBeforeTheColonIsRefused() {
        refuseRequest("GET / HTTP/1.1\r\nHost : a\r\n\r\n", .whitespaceBeforeColon)
        refuseRequest("GET / HTTP/1.1\r\nContent-Length\t: 5\r\n\r\n", .whitespaceBeforeColon)
    }

    func testInvalidTokenCharactersInNamesAreRefused() {
        for name in ["X(y)", "X\"y", "X/y", "X[y]", "X@y", "X,y", "X;y", "X=y", "X{y}", "X?y", "X\u{E9}", "X\u{7F}", "X\u{1}"] {
            refuseRequest("GET / HTTP/1.1\r\n\(name): v\r\n\r\n", .badFieldName)
        }
    }

    func testFieldLineWithoutANameOrColonIsRefused() {
        refuseRequest("GET / HTTP/1.1\r\n: v\r\n\r\n", .badFieldName)
        refuseRequest("GET / HTTP/1.1\r\nNoColonHere\r\n\r\n", .badFieldName)
    }

    func testControlCharactersInValuesAreRefused() {
        for control in ["\u{0}", "\u{1}", "\u{8}", "\u{B}", "\u{C}", "\u{1B}", "\u{1F}", "\u{7F}"] {
            refuseRequest("GET / HTTP/1.1\r\nX-V: a\(control)b\r\n\r\n", .badFieldValue)
        }
        refuseRequest("GET / HTTP/1.1\r\nX-V: \u{0}\r\n\r\n", .badFieldValue)
        refuseRequest("GET / HTTP/1.1\r\nX-V: ab\u{7F}\r\n\r\n", .badFieldValue)
    }

    // MARK: - Refused: request line

    func testMalformedRequestLinesAreRefused() {
        let lines = [
            "GET  / HTTP/1.1",          // two spaces
            "GET / HTTP/1.1 ",          // trailing space
            " GET / HTTP/1.1",          // leading space
            "GET /  HTTP/1.1",
            "GET /",                    // missing version
            "GET / ",
            "GET",
            "GET\t/\tHTTP/1.1",         // tabs as separators
            "GET /\t HTTP/1.1",
            "GET / http/1.1",           // version is case-sensitive
            "GET / Http/1.1",
            "GET / HTTP/1.10",
            "GET / HTTP/11",
            "GET / HTTP/1.x",
            "GET / HTTP /1.1",
            "G(T / HTTP/1.1",           // method must be a token
            "GET /a\u{E9} HTTP/1.1",    // target must be visible ASCII
            "GET /\u{7F} HTTP/1.1",
            " / HTTP/1.1",
        ]
        for line in lines {
            refuseRequest(line + "\r\nHost: a\r\n\r\n", .badStartLine)
        }
    }

    func testFieldLineInPlaceOfTheRequestLineIsRefused() {
        // Skipping leading empty lines must not make whatever follows acceptable.
        refuseRequest("\r\n\r\nHost: a\r\n\r\n", .badStartLine)
    }

    func testOtherMajorVersionsGet505() {
        refuseRequest("GET / HTTP/2.0\r\n\r\n", .unsupportedVersion, status: 505)
        refuseRequest("GET / HTTP/3.0\r\n\r\n", .unsupportedVersion, status: 505)
        refuseRequest("GET / HTTP/0.9\r\n\r\n", .unsupportedVersion, status: 505)
    }

    // MARK: - Head size

    func testHeadOverTheLimitGets431() {
        let filler = String(repeating: "a", count: 200)
        let text = "GET / HTTP/1.1\r\nX-Big: \(filler)\r\n\r\n"
        refuseRequest(text, .headTooLarge, status: 431, maxHeadBytes: 100)
    }

    func testHeadOverTheLimitGets431EvenBeforeItEnds() {
        let text = "GET / HTTP/1.1\r\nX-Big: " + String(repeating: "a", count: 200)
        refuseRequest(text, .headTooLarge, status: 431, maxHeadBytes: 100)
    }

    func testHeadOfExactlyTheLimitIsAccepted() {
        let base = "GET / HTTP/1.1\r\nX-Pad: \r\n\r\n"
        let text = "GET / HTTP/1.1\r\nX-Pad: " + String(repeating: "p", count: 100 - base.utf8.count) + "\r\n\r\n"
        XCTAssertEqual(text.utf8.count, 100)
        acceptRequest(text, maxHeadBytes: 100)
        guard case .complete(_, let consumed) = Wire.request(Wire.bytes(text + "body bytes after the head"), maxHeadBytes: 100) else {
            return XCTFail("a head within the limit stays acceptable when body bytes follow it")
        }
        XCTAssertEqual(consumed, 100)
    }

    func testHeadOneByteOverTheLimitIsRefused() {
        let base = "GET / HTTP/1.1\r\nX-Pad: \r\n\r\n"
        let text = "GET / HTTP/1.1\r\nX-Pad: " + String(repeating: "p", count: 101 - base.utf8.count) + "\r\n\r\n"
        XCTAssertEqual(text.utf8.count, 101)
        refuseRequest(text, .headTooLarge, status: 431, maxHeadBytes: 100)
        refuseRequest(text + "more", .headTooLarge, status: 431, maxHeadBytes: 100)
    }

    func testEndlessEmptyLinesBeforeTheRequestLineAreBounded() {
        // A client that only ever sends CRLF must not be waited on beyond the head limit.
        let text = String(repeating: "\r\n", count: 200)
        refuseRequest(text, .headTooLarge, status: 431, maxHeadBytes: 100)
    }

    func testMoreThanOneHostLineIsRefused() {
        // RFC 9112 §3.2: a request with more than one Host line gets 400; the proxy used to forward
        // it (replacing Host with the target's authority), which the smuggling corpus flagged.
        refuseRequest("GET http://a.example/ HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n", .badFieldValue)
        refuseRequest("GET / HTTP/1.1\r\nHost: a.example\r\nX: y\r\nhost: a.example\r\n\r\n", .badFieldValue)
        XCTAssertNotNil(acceptRequest("GET / HTTP/1.1\r\nHost: a.example\r\nX-Host: b.example\r\n\r\n"))
    }
}
