import XCTest
@testable import CountersignHTTP

/// Field lookups, list parsing and in-place edits, and the keep-alive decision they feed.
final class HeaderFieldsTests: XCTestCase {
    private var sample: HeaderFields {
        HeaderFields([HeaderField("host", "a"), HeaderField("X-Forwarded-For", "10.0.0.1"),
                      HeaderField("Accept", "*/*"), HeaderField("x-forwarded-for", "10.0.0.2")])
    }

    /// The fields as the proxy writes them (`Name: value` CRLF each), without the blank line.
    private func lines(_ fields: HeaderFields) -> [UInt8] {
        var out: [UInt8] = []
        out.appendHead(bound: fields.byteCount) { writer in
            fields.writeLines(to: &writer, attending: FieldNames(), attendAll: false, context: ()) { _, _, _, _ in .kept }
        }
        return out
    }

    func testLookupsIgnoreCaseAndReturnValuesInOrder() {
        XCTAssertEqual(sample["HOST"], "a")
        XCTAssertEqual(sample["X-FORWARDED-FOR"], "10.0.0.1", "the subscript returns the first")
        XCTAssertEqual(sample.values("x-forwarded-for"), ["10.0.0.1", "10.0.0.2"])
        XCTAssertTrue(sample.contains("accept"))
        XCTAssertFalse(sample.contains("Accept-Encoding"), "a longer name with the same prefix is another field")
        XCTAssertNil(sample["Acce"])
    }

    /// The first value only, byte for byte: no case folding, no other field of the name.
    func testFirstValueEqualsComparesTheFirstValueExactly() {
        let fields = HeaderFields([HeaderField("Host", "api.example"), HeaderField("host", "other.example")])
        XCTAssertTrue(fields.firstValue(.host, equals: Array("api.example".utf8)))
        XCTAssertFalse(fields.firstValue(.host, equals: Array("other.example".utf8)), "only the first value counts")
        XCTAssertFalse(fields.firstValue(.host, equals: Array("API.example".utf8)), "a value's case is kept")
        XCTAssertFalse(fields.firstValue(.host, equals: Array("api.exampl".utf8)), "a prefix is another value")
        XCTAssertFalse(fields.firstValue(.host, equals: Array("api.example:443".utf8)))
        XCTAssertFalse(sample.firstValue(.contentLength, equals: []), "an absent field equals nothing, not even empty")
        XCTAssertTrue(HeaderFields([HeaderField("Host", "")]).firstValue(.host, equals: []))
    }

    func testReplaceOrAppendKeepsPositionAndSpellingAndDropsDuplicates() {
        var fields = sample
        fields.replaceOrAppend("X-FORWARDED-FOR", "10.0.0.9")
        XCTAssertEqual(fields.fields, [HeaderField("host", "a"), HeaderField("X-Forwarded-For", "10.0.0.9"),
                                       HeaderField("Accept", "*/*")])
    }

    func testReplaceOrAppendAppendsWhenAbsent() {
        var fields = sample
        fields.replaceOrAppend("Via", "1.1 countersign")
        XCTAssertEqual(fields.count, 5)
        XCTAssertEqual(fields.fields.last, HeaderField("Via", "1.1 countersign"))
    }

    /// An auth answer is spliced as the bytes it was built as: in place of the first field of
    /// that name (the others dropped), else appended; an ISO-8859-1 byte stays one byte.
    func testReplaceOrAppendBytesSplicesTheValueAsItIs() {
        var fields = sample
        fields.replaceOrAppend("x-forwarded-for", bytes: [0x61, 0xE9])
        XCTAssertEqual(fields.fields, [HeaderField("host", "a"), HeaderField("X-Forwarded-For", "a\u{E9}"), HeaderField("Accept", "*/*")])
        XCTAssertEqual(lines(fields), Array("host: a\r\nX-Forwarded-For: a".utf8) + [0xE9] + Array("\r\nAccept: */*\r\n".utf8))

        var absent = sample
        absent.replaceOrAppend("Authorization", bytes: Array("Digest realm=\"caf".utf8) + [0xE9, 0x22])
        XCTAssertEqual(absent.count, 5)
        XCTAssertEqual(absent.fields.last, HeaderField("Authorization", "Digest realm=\"caf\u{E9}\""))
    }

    func testRemoveAllIgnoresCase() {
        var fields = sample
        fields.removeAll("X-Forwarded-For")
        XCTAssertEqual(fields.fields.map(\.name), ["host", "Accept"])
    }

    func testListElementsSplitAcrossFieldsTrimAndDropEmpties() {
        let fields = HeaderFields([HeaderField("Connection", " keep-alive ,, X-Foo\t"), HeaderField("connection", ",Upgrade")])
        XCTAssertEqual(fields.listElements("Connection"), ["keep-alive", "X-Foo", "Upgrade"])
        XCTAssertTrue(fields.listContains("CONNECTION", token: "UPGRADE"))
        XCTAssertFalse(fields.listContains("Connection", token: "close"))
        XCTAssertFalse(fields.listContains("Connection", token: "keep"), "tokens match whole, not by prefix")
    }

    /// Elements are compared without their OWS, by their whole length, in any case; an element of
    /// only whitespace is empty, and a token is not found inside a longer one or across a comma.
    func testListContainsComparesWholeTrimmedElements() {
        let fields = HeaderFields([HeaderField("Connection", "\t , Keep-Alive\t,close-ish, up grade"), HeaderField("X-List", " \t,a,")])
        XCTAssertTrue(fields.listContains(.connection, token: "keep-alive"))
        XCTAssertFalse(fields.listContains(.connection, token: "close"), "a prefix of an element")
        XCTAssertFalse(fields.listContains(.connection, token: "close-ish, up"), "across a comma")
        XCTAssertTrue(fields.listContains(.connection, token: "up grade"), "inner whitespace belongs to the element")
        XCTAssertFalse(fields.listContains(.connection, token: "upgrade"))
        XCTAssertTrue(fields.listContains("x-list", token: "A"))
        XCTAssertFalse(fields.listContains("x-list", token: ""), "whitespace-only and empty elements are skipped")
        XCTAssertFalse(HeaderFields([HeaderField("Connection", "keep-alive")]).listContains(.connection, token: "keep-alivE2"))
    }

    func testNormalizeListDropsEmptyElementsAndMergesFieldsWhereTheFirstStood() {
        var fields = HeaderFields([HeaderField("Host", "a"), HeaderField("Transfer-Encoding", ", ,gzip"),
                                   HeaderField("X-Other", "1"), HeaderField("transfer-encoding", "chunked,")])
        fields.normalizeList("Transfer-Encoding")
        XCTAssertEqual(fields.fields, [HeaderField("Host", "a"), HeaderField("Transfer-Encoding", "gzip, chunked"),
                                       HeaderField("X-Other", "1")])
        var empty = HeaderFields([HeaderField("Transfer-Encoding", " , ")])
        empty.normalizeList("Transfer-Encoding")
        XCTAssertFalse(empty.contains("Transfer-Encoding"))
    }

    func testASCIICaseFoldingOnlyTouchesASCIILetters() {
        XCTAssertTrue(ASCIICase.equal("Content-LENGTH", "content-length"))
        XCTAssertFalse(ASCIICase.equal("Content-Length", "Content-Lengt"))
        XCTAssertFalse(ASCIICase.equal("\u{C9}", "\u{E9}"), "non-ASCII letters are not folded")
        XCTAssertEqual(ASCIICase.lowercased("WWW.Example.COM"), "www.example.com")
        XCTAssertFalse(ASCIICase.equal("[", "{"), "only A-Z fold; punctuation 0x20 apart is distinct")
    }

    // MARK: - Keep-alive (RFC 9112 §9.3)

    private func request(_ version: String, _ fields: String = "") throws -> RequestHead {
        try XCTUnwrap(acceptRequest("GET / \(version)\r\n\(fields)\r\n"))
    }

    func testHTTP11PersistsUnlessClosed() throws {
        XCTAssertTrue(try request("HTTP/1.1").wantsKeepAlive)
        XCTAssertTrue(try request("HTTP/1.1", "Connection: keep-alive\r\n").wantsKeepAlive)
        XCTAssertFalse(try request("HTTP/1.1", "Connection: close\r\n").wantsKeepAlive)
        XCTAssertFalse(try request("HTTP/1.1", "Connection: Upgrade, CLOSE\r\n").wantsKeepAlive)
        XCTAssertFalse(try request("HTTP/1.1", "Connection: keep-alive\r\nConnection: close\r\n").wantsKeepAlive)
    }

    func testHTTP10ClosesUnlessKeepAliveIsAsked() throws {
        XCTAssertFalse(try request("HTTP/1.0").wantsKeepAlive)
        XCTAssertTrue(try request("HTTP/1.0", "Connection: Keep-Alive\r\n").wantsKeepAlive)
        XCTAssertFalse(try request("HTTP/1.0", "Connection: keep-alive, close\r\n").wantsKeepAlive)
        XCTAssertFalse(try request("HTTP/1.0", "Keep-Alive: timeout=5\r\n").wantsKeepAlive, "Keep-Alive alone is not the Connection option")
    }

    func testResponseKeepAlive() throws {
        XCTAssertTrue(try XCTUnwrap(acceptResponse("HTTP/1.1 200 OK\r\n\r\n")).allowsKeepAlive)
        XCTAssertFalse(try XCTUnwrap(acceptResponse("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")).allowsKeepAlive)
        XCTAssertFalse(try XCTUnwrap(acceptResponse("HTTP/1.0 200 OK\r\n\r\n")).allowsKeepAlive)
        XCTAssertTrue(try XCTUnwrap(acceptResponse("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n")).allowsKeepAlive)
    }

    /// What `Connection` says is read once and kept with the fields: every change that can
    /// touch a `Connection` value is seen by the keep-alive, upgrade and hop-by-hop answers after it.
    func testConnectionAnswersFollowEveryChangeOfTheFields() {
        var head = RequestHead(method: "GET", target: "/", headers: HeaderFields([HeaderField("Host", "a"), HeaderField("Upgrade", "websocket")]))
        XCTAssertTrue(head.wantsKeepAlive)
        XCTAssertFalse(HopByHop.requestsUpgrade(head.headers))
        head.headers.append("connection", "Upgrade, CLOSE")
        XCTAssertFalse(head.wantsKeepAlive)
        XCTAssertTrue(HopByHop.requestsUpgrade(head.headers))
        head.headers.replaceOrAppend("Connection", "upgrade")
        XCTAssertTrue(head.wantsKeepAlive)
        XCTAssertTrue(HopByHop.requestsUpgrade(head.headers))
        head.headers.rewriteValues { name, _ in name.elementsEqual("connection".utf8) ? Array("close".utf8) : nil }
        XCTAssertFalse(head.wantsKeepAlive)
        XCTAssertFalse(HopByHop.requestsUpgrade(head.headers))
        head.headers.removeAll("Connection")
        XCTAssertTrue(head.wantsKeepAlive)

        var old = RequestHead(method: "GET", target: "/", version: .http10, headers: HeaderFields([HeaderField("Connection", "KEEP-ALIVE")]))
        XCTAssertTrue(old.wantsKeepAlive)
        old.headers.removeAll { $0.name == "Connection" }
        XCTAssertFalse(old.wantsKeepAlive)
        old.headers.normalizeList("Connection")
        old.headers.append("Connection", ",keep-alive ,")
        XCTAssertTrue(old.wantsKeepAlive)
        XCTAssertFalse(RequestHead(method: "GET", target: "/", version: .http10,
                                   headers: HeaderFields([HeaderField("Connection", "keep-alivE2, closed, keep_alive")])).wantsKeepAlive,
                       "elements are compared whole, in any case")
    }

    /// A field named by a `Connection` value set after the fields were made is left out too.
    func testFieldsNamedByAChangedConnectionAreStripped() {
        var fields = HeaderFields([HeaderField("Host", "a"), HeaderField("X-Secret", "1"), HeaderField("Connection", "keep-alive")])
        fields.replaceOrAppend("Connection", "keep-alive, x-secret")
        HopByHop.strip(&fields)
        XCTAssertEqual(fields.fields, [HeaderField("Host", "a")])
    }
}
