import XCTest
@testable import CountersignHTTP

/// The forwarded heads are written in one pass over the received bytes (`FieldRewrite`).
/// Each must equal what the same edits give when made one by one on a copy of the fields
/// (`HopByHop.strip`, `replaceOrAppend`, `removeAll`, `normalizeList`, `append`), for
/// hostile field sections: repeats, odd case, `Connection` naming fields, split lists.
final class FieldRewriteTests: XCTestCase {
    private let names = ["Host", "host", "Connection", "connection", "Keep-Alive", "Upgrade", "TE", "Trailer",
                         "Transfer-Encoding", "Content-Length", "Expect", "Authorization", "Proxy-Authorization",
                         "Proxy-Connection", "Via", "X-A", "x-b", "Accept", "Proxy-Authenticate", "Cookie"]
    private let values = ["keep-alive", "close", "Upgrade", "X-A, close", " x-b ,, keep-alive", "chunked", ", chunked",
                          "gzip, chunked", "5", "5, 5", " 5 ", "100-continue", "websocket", "Basic old", "a\u{e9}b", "", "TE, Expect",
                          "chunked, x-long-coding-\u{e9}t\u{e9}"]

    /// Half of the sections built field by field, half parsed from wire text whose lines are
    /// spelled in assorted ways (`Name:value`, `Name:  value `, `Name:\tvalue`, `Name: value`),
    /// so the writer's copy of received lines as they came is checked against the normal form.
    private func randomFields(_ rng: inout SeededGenerator) -> HeaderFields {
        let fields = (0..<Int.random(in: 0...8, using: &rng)).map { _ in
            HeaderField(names.randomElement(using: &rng)!, values.randomElement(using: &rng)!)
        }
        guard Bool.random(using: &rng) else { return HeaderFields(fields) }
        let separators = [":", ": ", ":  ", ":\t", ": ", ": "]
        let trailers = ["", "", "", " ", "\t"]
        var wire = "HTTP/1.1 200 OK\r\n"
        for field in fields {
            wire += field.name + separators.randomElement(using: &rng)! + field.value + trailers.randomElement(using: &rng)! + "\r\n"
        }
        guard case .complete(let head, _) = Wire.response(Wire.bytes(wire + "\r\n")) else {
            XCTFail("the generated section does not parse: \(wire.debugDescription)")
            return HeaderFields(fields)
        }
        return head.headers
    }

    /// The request edits of `ForwardedHeads.request`, made one at a time on a copy.
    private func composedRequest(_ head: RequestHead, framing: BodyFraming, target: String, hostField: String,
                                 answers: [(name: FieldName, value: [UInt8])], handshakeLeg: Bool, ownExpect: Bool) -> [UInt8] {
        var headers = head.headers
        HopByHop.strip(&headers, keepUpgrade: HopByHop.requestsUpgrade(head.headers))
        headers.replaceOrAppend("Host", hostField)
        headers.append("Via", head.version == .http10 ? "1.0 countersign" : "1.1 countersign")
        for answer in answers { headers.replaceOrAppend(answer.name.spelling.description, bytes: answer.value) }
        if handshakeLeg && framing != .none {
            headers.removeAll("Transfer-Encoding")
            headers.removeAll("Expect")
            headers.replaceOrAppend("Content-Length", "0")
        } else {
            if framing == .chunked { headers.normalizeList("Transfer-Encoding") }
            if ownExpect { headers.append("Expect", "100-continue") }
        }
        return HeadSerializer.request(method: head.method, target: target, headers: headers)
    }

    /// The response edits of `ForwardedHeads.response`, made one at a time on a copy.
    private func composedResponse(_ response: ResponseHead, framing: BodyFraming, clientVersion: HTTPVersion, clientKeepAlive: Bool) -> [UInt8] {
        var headers = response.headers
        HopByHop.strip(&headers)
        if framing == .chunked && clientVersion == .http10 {
            headers.removeAll("Transfer-Encoding")
        } else if framing == .chunked {
            headers.normalizeList("Transfer-Encoding")
        }
        headers.append("Via", response.version == .http10 ? "1.0 countersign" : "1.1 countersign")
        if !clientKeepAlive {
            headers.append("Connection", "close")
        } else if clientVersion == .http10 {
            headers.append("Connection", "keep-alive")
        }
        return HeadSerializer.response(ResponseHead(status: response.status, reason: response.reason, headers: headers))
    }

    func testOnePassRequestEqualsTheEditsMadeOneByOne() {
        var rng = SeededGenerator(state: 0x5EED_F1E1D)
        let framings: [BodyFraming] = [.none, .chunked, .contentLength(5)]
        let answerSets: [[(name: FieldName, value: [UInt8])]] = [
            [], [(.authorization, Array("Basic YTpi".utf8))], [(.proxyAuthorization, Array("Basic eDp5".utf8))],
            [(.authorization, Array("NTLM TlRMTVNTUAAB".utf8)), (.proxyAuthorization, Array("Basic eDp5".utf8))],
        ]
        for _ in 0..<5_000 {
            let head = RequestHead(method: "POST", target: "http://o/x", version: Bool.random(using: &rng) ? .http11 : .http10,
                                   headers: randomFields(&rng))
            let framing = framings.randomElement(using: &rng)!
            let answers = answerSets.randomElement(using: &rng)!
            let handshakeLeg = Bool.random(using: &rng), ownExpect = Bool.random(using: &rng)
            let written = ForwardedHeads.requestHead(head, framing: framing, target: "/x", hostField: "o:80", answers: answers,
                                                     handshakeLeg: handshakeLeg, ownExpect: ownExpect)
            let onePass = written.bytes
            XCTAssertLessThanOrEqual(onePass.count, written.byteBound)
            let composed = composedRequest(head, framing: framing, target: "/x", hostField: "o:80", answers: answers,
                                           handshakeLeg: handshakeLeg, ownExpect: ownExpect)
            guard onePass == composed else {
                return XCTFail("request differs for \(head.headers.fields):\n\(String(decoding: onePass, as: UTF8.self))\nvs\n\(String(decoding: composed, as: UTF8.self))")
            }
        }
    }

    func testOnePassResponseEqualsTheEditsMadeOneByOne() {
        var rng = SeededGenerator(state: 0xF1E1D_5EED)
        for _ in 0..<5_000 {
            let response = ResponseHead(version: Bool.random(using: &rng) ? .http11 : .http10, status: [200, 204, 404].randomElement(using: &rng)!,
                                        reason: "Some Reason", headers: randomFields(&rng))
            let framing: BodyFraming = Bool.random(using: &rng) ? .chunked : .contentLength(5)
            let clientVersion: HTTPVersion = Bool.random(using: &rng) ? .http11 : .http10
            let keepAlive = Bool.random(using: &rng)
            let (written, _) = ForwardedHeads.responseHead(response, framing: framing, clientVersion: clientVersion, clientKeepAlive: keepAlive)
            let onePass = written.bytes
            XCTAssertLessThanOrEqual(onePass.count, written.byteBound)
            let composed = composedResponse(response, framing: framing, clientVersion: clientVersion, clientKeepAlive: keepAlive)
            guard onePass == composed else {
                return XCTFail("response differs for \(response.headers.fields):\n\(String(decoding: onePass, as: UTF8.self))\nvs\n\(String(decoding: composed, as: UTF8.self))")
            }
        }
    }

    /// A rewrite finds the edit for a name in three bits per `FieldName` of one word: a name
    /// added past what the word holds would find another name's edit.
    func testEveryFieldNameHasRoomForItsEditIndex() {
        XCTAssertLessThanOrEqual(FieldName.allCases.count * 3, UInt64.bitWidth)
    }

    /// Edits of several names, set in place and appended, each find their own value.
    func testEditsOfSeveralNamesKeepTheirOwnValues() {
        let received = HeaderFields([HeaderField("Transfer-Encoding", "a"), HeaderField("Expect", "b"), HeaderField("X-A", "1"),
                                     HeaderField("Content-Length", "5"), HeaderField("Host", "h")])
        var fields = FieldRewrite(received, keepUpgrade: false)
        fields.setOrAppend(.proxyAuthorization, bytes: Array("p".utf8))
        fields.setOrAppend(.contentLength, "0")
        fields.remove(.expect)
        fields.setOrAppend(.host, "o")
        fields.setOrAppend(.authorization, bytes: Array("q".utf8))
        fields.setOrAppend(.transferEncoding, "t")
        var out: [UInt8] = []
        out.appendHead(bound: fields.byteBound) { fields.write(to: &$0) }
        XCTAssertEqual(String(decoding: out, as: UTF8.self),
                       "Transfer-Encoding: t\r\nX-A: 1\r\nContent-Length: 0\r\nHost: o\r\nProxy-Authorization: p\r\nAuthorization: q\r\n\r\n")
    }

    /// A copy of a rewrite changed after it was made (its later edits are held apart from the
    /// first) leaves the original's edits as they were.
    func testACopiedRewriteChangedLaterLeavesTheOriginalAsItWas() {
        let received = HeaderFields([HeaderField("Host", "h"), HeaderField("Expect", "b"), HeaderField("Content-Length", "5")])
        var original = FieldRewrite(received, keepUpgrade: false)
        original.setOrAppend(.host, "o")
        original.setOrAppend(.contentLength, "0")
        var copy = original
        copy.setOrAppend(.contentLength, "7")
        copy.remove(.expect)
        func written(_ fields: FieldRewrite) -> String {
            var out: [UInt8] = []
            out.appendHead(bound: fields.byteBound) { fields.write(to: &$0) }
            return String(decoding: out, as: UTF8.self)
        }
        XCTAssertEqual(written(original), "Host: o\r\nExpect: b\r\nContent-Length: 0\r\n\r\n")
        XCTAssertEqual(written(copy), "Host: o\r\nContent-Length: 7\r\n\r\n")
    }

    /// A repeated field given a new value keeps the sender's spelling and position of the
    /// first one; its repeats go.
    func testASetFieldTakesTheFirstPlaceAndDropsItsRepeats() {
        let head = RequestHead(method: "GET", target: "/", headers: HeaderFields([
            HeaderField("host", "a"), HeaderField("X-A", "1"), HeaderField("HOST", "b"),
        ]))
        let out = ForwardedHeads.request(head, framing: .none, target: "/", hostField: "o", answers: [], handshakeLeg: false, ownExpect: false)
        XCTAssertEqual(String(decoding: out, as: UTF8.self), "GET / HTTP/1.1\r\nhost: o\r\nX-A: 1\r\nVia: 1.1 countersign\r\n\r\n")
    }

    /// A value given as wire bytes (an auth answer) goes out byte for byte, in place or appended.
    func testAValueInWireBytesIsWrittenAsItIs() {
        let received = HeaderFields([HeaderField("authorization", "old"), HeaderField("X-A", "1")])
        var fields = FieldRewrite(received, keepUpgrade: false)
        fields.setOrAppend(.authorization, bytes: Array("Basic YTpi".utf8))
        fields.setOrAppend(.proxyAuthorization, bytes: [0x42, 0xE9])
        var out: [UInt8] = []
        out.appendHead(bound: fields.byteBound) { fields.write(to: &$0) }
        XCTAssertEqual(out, Array("authorization: Basic YTpi\r\nX-A: 1\r\nProxy-Authorization: ".utf8) + [0x42, 0xE9] + Array("\r\n\r\n".utf8))
    }
}
