import XCTest
@testable import CountersignHTTP

/// The chunked decoder as the I/O shell drives it: it asks for a line or for a count of
/// data bytes, and reports what each line meant.
final class ChunkedDecoderTests: XCTestCase {
    private func offer(_ decoder: inout ChunkedDecoder, _ line: String) throws -> ChunkedDecoder.Event {
        let bytes = Wire.bytes(line)
        return try bytes.withUnsafeBytes { try decoder.consumeLine($0) }
    }

    /// Drives a decoder over a whole chunked body, splitting on CRLF the way the shell does,
    /// and returns the events and the payload.
    private func decode(_ body: String, maxTrailerBytes: Int = 16384) throws -> (events: [ChunkedDecoder.Event], payload: String) {
        var decoder = ChunkedDecoder(maxTrailerBytes: maxTrailerBytes)
        let bytes = Wire.bytes(body)
        var position = 0
        var events: [ChunkedDecoder.Event] = []
        var payload: [UInt8] = []
        while true {
            switch decoder.need {
            case .done:
                XCTAssertEqual(position, bytes.count, "bytes left after the last chunk")
                return (events, String(decoding: payload, as: UTF8.self))
            case .data(let owed):
                let take = min(Int(owed), bytes.count - position)
                XCTAssertEqual(take, Int(owed), "body ended inside chunk data")
                payload += bytes[position..<position + take]
                position += take
                decoder.consumedData(UInt64(take))
            case .line:
                guard let end = (position..<max(position, bytes.count - 1)).first(where: { bytes[$0] == 0x0D && bytes[$0 + 1] == 0x0A }) else {
                    throw HTTPParseError(.badChunk, "test body ended without a CRLF")
                }
                let line = Array(bytes[position..<end])
                events.append(try line.withUnsafeBytes { try decoder.consumeLine($0) })
                position = end + 2
            }
        }
    }

    func testDecodesChunksAndTheLastChunk() throws {
        let result = try decode("5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n")
        XCTAssertEqual(result.payload, "hello, world")
        XCTAssertEqual(result.events, [.chunk(size: 5), .chunkEnd, .chunk(size: 7), .chunkEnd, .lastChunk, .end])
    }

    func testEmptyBody() throws {
        XCTAssertEqual(try decode("0\r\n\r\n").events, [.lastChunk, .end])
    }

    func testHexSizesInEitherCase() throws {
        let payload = String(repeating: "x", count: 26)
        XCTAssertEqual(try decode("1a\r\n\(payload)\r\n0\r\n\r\n").payload, payload)
        XCTAssertEqual(try decode("1A\r\n\(payload)\r\n000\r\n\r\n").payload, payload)
    }

    func testChunkExtensionsAreAcceptedAndIgnored() throws {
        let result = try decode("3;name=value\r\nabc\r\n2 ;flag\r\nde\r\n1;q=\"quoted; str\"\r\nf\r\n0;last\r\n\r\n")
        XCTAssertEqual(result.payload, "abcdef")
        XCTAssertEqual(result.events.first, .chunk(size: 3))
    }

    func testTrailersAreReportedAsFields() throws {
        let result = try decode("2\r\nok\r\n0\r\nChecksum: abc123\r\nX-Server-Timing: db;dur=53\r\n\r\n")
        XCTAssertEqual(result.events, [.chunk(size: 2), .chunkEnd, .lastChunk,
                                       .trailer(HeaderField("Checksum", "abc123")),
                                       .trailer(HeaderField("X-Server-Timing", "db;dur=53")), .end])
    }

    func testDataMayArriveInPieces() throws {
        var decoder = ChunkedDecoder()
        XCTAssertEqual(try offer(&decoder, "a"), .chunk(size: 10))
        XCTAssertEqual(decoder.need, .data(10))
        decoder.consumedData(3)
        XCTAssertEqual(decoder.need, .data(7))
        decoder.consumedData(7)
        XCTAssertEqual(decoder.need, .line)
        XCTAssertEqual(try offer(&decoder, ""), .chunkEnd)
        XCTAssertEqual(try offer(&decoder, "0"), .lastChunk)
        XCTAssertEqual(decoder.need, .line)
        XCTAssertEqual(try offer(&decoder, ""), .end)
        XCTAssertEqual(decoder.need, .done)
    }

    func testLargestSizeIsSixteenHexDigits() throws {
        var decoder = ChunkedDecoder()
        XCTAssertEqual(try offer(&decoder, "ffffffffffffffff"), .chunk(size: .max))
        XCTAssertEqual(decoder.need, .data(.max))
    }

    func testSizesOfMoreThanSixteenHexDigitsAreRefused() {
        for line in ["10000000000000000", "fffffffffffffffff", "00000000000000001", String(repeating: "f", count: 64)] {
            var decoder = ChunkedDecoder()
            assertRefusal(.badChunk, try offer(&decoder, line))
        }
    }

    func testBadSizeLinesAreRefused() {
        for line in ["", "g", "-1", "+1", "0x10", " 5", "5 x", "5;ext\u{0}", "5;\u{7F}", "5,", "\u{E9}"] {
            var decoder = ChunkedDecoder()
            assertRefusal(.badChunk, try offer(&decoder, line))
        }
    }

    func testMissingCRLFAfterChunkDataIsRefused() throws {
        var decoder = ChunkedDecoder()
        _ = try offer(&decoder, "3")
        decoder.consumedData(3)
        // The shell found "xy" where the CRLF after the data belongs: the data was longer than its size.
        assertRefusal(.badChunk, try offer(&decoder, "xy"))
        XCTAssertThrowsError(try decode("3\r\nabcd\r\n0\r\n\r\n"))
    }

    func testALineWhileDataIsOwedIsRefused() throws {
        var decoder = ChunkedDecoder()
        _ = try offer(&decoder, "4")
        assertRefusal(.badChunk, try offer(&decoder, ""))
    }

    func testALineAfterTheEndIsRefused() throws {
        var decoder = ChunkedDecoder()
        _ = try offer(&decoder, "0")
        _ = try offer(&decoder, "")
        assertRefusal(.badChunk, try offer(&decoder, "0"))
    }

    func testMalformedTrailersAreRefused() throws {
        for (trailer, kind) in [("Bad Name: x", HTTPParseError.Kind.whitespaceBeforeColon), (" folded", .obsoleteLineFolding),
                                ("X: a\u{1}", .badFieldValue), ("NoColon", .badFieldName)] {
            var decoder = ChunkedDecoder()
            _ = try offer(&decoder, "0")
            assertRefusal(kind, try offer(&decoder, trailer))
        }
    }

    func testTrailerSectionOverItsLimitIsRefused() throws {
        var decoder = ChunkedDecoder(maxTrailerBytes: 64)
        _ = try offer(&decoder, "0")
        XCTAssertEqual(try offer(&decoder, "X-A: " + String(repeating: "a", count: 30)), .trailer(HeaderField("X-A", String(repeating: "a", count: 30))))
        assertRefusal(.headTooLarge, status: 431, try offer(&decoder, "X-B: " + String(repeating: "b", count: 30)))
    }
}
