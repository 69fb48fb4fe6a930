import XCTest
@testable import CountersignHTTP

/// What the machine sends: heads encoded straight behind their frame header, split into
/// CONTINUATION when larger than the peer's frame size, and read in place from an HTTP/1.1
/// head; body octets the driver holds, framed within the windows and the peer's frame size.
final class H2SendingTests: XCTestCase {
    /// The blocks the machine wrote, each with the frames that carried it.
    private func blocks(_ frames: [H2Frame]) -> [(frames: Int, fragment: [UInt8], endStream: Bool)] {
        var result: [(frames: Int, fragment: [UInt8], endStream: Bool)] = []
        for frame in frames {
            switch frame {
            case .headers(_, let fragment, let endStream, _, _, _): result.append((1, fragment, endStream))
            case .continuation(_, let fragment, _): result[result.count - 1].frames += 1; result[result.count - 1].fragment += fragment
            default: break
            }
        }
        return result
    }

    func testAHeadLargerThanAFrameGoesAsHeadersAndContinuationAndTheNextHeadStaysInStep() throws {
        var h = H2Harness.server()
        _ = h.request(1)
        _ = h.request(3)
        let large = [HPACKField(":status", "200")] + (0..<40).map { HPACKField("x-large-\($0)", String(repeating: "v", count: 1000)) }
        let first = h.absorb(try h.machine.sendHead(stream: 1, fields: large, endStream: true).get())
        let second = h.absorb(try h.machine.sendHead(stream: 3, fields: [HPACKField(":status", "204"), HPACKField("x-large-39", String(repeating: "v", count: 1000))], endStream: true).get())
        let sent = blocks(first.frames + second.frames)
        XCTAssertEqual(sent.count, 2)
        XCTAssertGreaterThan(sent[0].frames, 1, "40 kB of fields do not fit one 16 kB frame")
        XCTAssertEqual(try h.decoder.decode(sent[0].fragment), large)
        XCTAssertTrue(sent[0].endStream)
        XCTAssertEqual(sent[1].frames, 1)
        XCTAssertEqual(try h.decoder.decode(sent[1].fragment), [HPACKField(":status", "204"), HPACKField("x-large-39", String(repeating: "v", count: 1000))])
        XCTAssertLessThan(sent[1].fragment.count, 10, "the repeated field is indexed from the table both sides kept")
    }

    func testAnHTTP1HeadIsSentWithItsNamesInLowerCaseAndIndexedTheSecondTime() throws {
        var h = H2Harness.server()
        _ = h.request(1)
        _ = h.request(3)
        var headers = HeaderFields()
        for (name, value) in [("Server", "nginx"), ("Content-Type", "text/plain"), ("X-Trace-ID", "abc"), ("Set-Cookie", "id=1")] { headers.append(name, value) }
        let response = ForwardedHeads.h2Fields(ResponseHead(status: 200, reason: "OK", headers: headers), via: .http11)
        let expected = [HPACKField(":status", "200"), HPACKField("server", "nginx"), HPACKField("content-type", "text/plain"),
                        HPACKField("x-trace-id", "abc"), HPACKField("set-cookie", "id=1"), HPACKField("via", "1.1 countersign")]
        let first = blocks(h.absorb(try h.machine.sendHead(stream: 1, fields: response, endStream: true).get()).frames)
        let second = blocks(h.absorb(try h.machine.sendHead(stream: 3, fields: response, endStream: true).get()).frames)
        XCTAssertEqual(try h.decoder.decode(first[0].fragment), expected)
        XCTAssertEqual(try h.decoder.decode(second[0].fragment), expected)
        XCTAssertFalse(h.decoder.dynamicTableEntries.contains { $0.name == Array("set-cookie".utf8) }, "a cookie is never indexed")
        // :status and four indexed fields, an octet each; set-cookie a literal again (its name's
        // index in two octets, the value's length in one), never indexed nor Huffman-coded.
        XCTAssertEqual(second[0].fragment.count, 5 + 2 + 1 + "id=1".utf8.count)
    }

    func testHeldBodyOctetsAreFramedWithinTheWindowsAndTheFrameSize() throws {
        var h = H2Harness.server()
        _ = h.send(.settings(ack: false, [H2Setting(H2Setting.initialWindowSize, 40000)]))
        _ = h.request(1)
        _ = h.absorb(try h.machine.sendHead(stream: 1, fields: [HPACKField(":status", "200")], endStream: false).get())
        // The connection window is still 65535; the stream's 40000: frames of 16384 at most.
        let frames = try h.machine.sendData(stream: 1, held: 50000, endStream: true).get()
        XCTAssertEqual(frames.count, 40000)
        XCTAssertEqual(Array(frames).map(\.length), [16384, 16384, 7232])
        XCTAssertFalse(Array(frames).contains { $0.endStream }, "END_STREAM only with the last octet")
        XCTAssertEqual(h.machine.sendWindow(stream: 1), 0)
        XCTAssertEqual(h.machine.streamState(1), .halfClosedRemote)
        _ = h.send(.windowUpdate(stream: 1, increment: 20000))
        let rest = try h.machine.sendData(stream: 1, held: 10000, endStream: true).get()
        XCTAssertEqual(Array(rest), [H2DataFrames.Frame(length: 10000, endStream: true)])
        XCTAssertEqual(h.machine.streamState(1), .closed)
        XCTAssertEqual(h.machine.sendData(stream: 1, held: 1, endStream: false).map(\.count), .failure(.streamNotWritable))
    }

    func testAHeldBodyWithNothingLeftEndsTheStreamWithAnEmptyFrame() throws {
        var h = H2Harness.server()
        _ = h.request(1)
        _ = h.absorb(try h.machine.sendHead(stream: 1, fields: [HPACKField(":status", "200")], endStream: false).get())
        XCTAssertEqual(Array(try h.machine.sendData(stream: 1, held: 0, endStream: true).get()), [H2DataFrames.Frame(length: 0, endStream: true)])
        XCTAssertEqual(h.machine.streamState(1), .closed)
    }
}
