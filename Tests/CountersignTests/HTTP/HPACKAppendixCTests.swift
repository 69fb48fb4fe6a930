import XCTest
@testable import CountersignHTTP

/// RFC 7541 Appendix C, as known answers: each block decoded (and the dynamic table checked
/// after it), and our encoder's output compared with the RFC's where our choices are the RFC's.
final class HPACKAppendixCTests: XCTestCase {
    private struct Step {
        let wire: String
        let fields: [(String, String)]
        let tableSize: Int
        let table: [(String, String)]
    }

    private let requests = [
        [(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com")],
        [(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com"), ("cache-control", "no-cache")],
        [(":method", "GET"), (":scheme", "https"), (":path", "/index.html"), (":authority", "www.example.com"), ("custom-key", "custom-value")],
    ]
    private let requestTables = [
        [(":authority", "www.example.com")],
        [("cache-control", "no-cache"), (":authority", "www.example.com")],
        [("custom-key", "custom-value"), ("cache-control", "no-cache"), (":authority", "www.example.com")],
    ]
    private let responses = [
        [(":status", "302"), ("cache-control", "private"), ("date", "Mon, 21 Oct 2013 20:13:21 GMT"), ("location", "https://www.example.com")],
        [(":status", "307"), ("cache-control", "private"), ("date", "Mon, 21 Oct 2013 20:13:21 GMT"), ("location", "https://www.example.com")],
        [(":status", "200"), ("cache-control", "private"), ("date", "Mon, 21 Oct 2013 20:13:22 GMT"), ("location", "https://www.example.com"),
         ("content-encoding", "gzip"), ("set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1")],
    ]
    private let responseTables = [
        [("location", "https://www.example.com"), ("date", "Mon, 21 Oct 2013 20:13:21 GMT"), ("cache-control", "private"), (":status", "302")],
        [(":status", "307"), ("location", "https://www.example.com"), ("date", "Mon, 21 Oct 2013 20:13:21 GMT"), ("cache-control", "private")],
        [("set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"), ("content-encoding", "gzip"), ("date", "Mon, 21 Oct 2013 20:13:22 GMT")],
    ]

    private func run(_ wires: [String], _ lists: [[(String, String)]], sizes: [Int], tables: [[(String, String)]], maxTableSize: Int,
                     file: StaticString = #filePath, line: UInt = #line) {
        var decoder = HPACKDecoder(maxTableSize: maxTableSize)
        for (step, wire) in wires.enumerated() {
            XCTAssertEqual(try decoder.decode(octets(wire)), fields(lists[step]), "block \(step + 1)", file: file, line: line)
            XCTAssertEqual(decoder.dynamicTableSize, sizes[step], "table size after block \(step + 1)", file: file, line: line)
            XCTAssertEqual(decoder.dynamicTableEntries, fields(tables[step]), "table after block \(step + 1)", file: file, line: line)
        }
    }

    private func encode(_ lists: [[(String, String)]], maxTableSize: Int, huffman: Bool) -> [String] {
        var encoder = HPACKEncoder(maxTableSize: maxTableSize)
        encoder.usesHuffman = huffman
        return lists.map { list in
            var out: [UInt8] = []
            encoder.encode(fields(list), into: &out)
            return hexString(out)
        }
    }

    // MARK: - C.1 integers

    func testC1Integers() throws {
        var out: [UInt8] = []
        HPACKInteger.encode(10, prefixBits: 5, flags: 0, into: &out)
        HPACKInteger.encode(1337, prefixBits: 5, flags: 0, into: &out)
        HPACKInteger.encode(42, prefixBits: 8, flags: 0, into: &out)
        XCTAssertEqual(out, [0x0A, 0x1F, 0x9A, 0x0A, 0x2A])
        var index = 0
        XCTAssertEqual(try HPACKInteger.decode(out, at: &index, prefixBits: 5), 10)
        XCTAssertEqual(try HPACKInteger.decode(out, at: &index, prefixBits: 5), 1337)
        XCTAssertEqual(try HPACKInteger.decode(out, at: &index, prefixBits: 8), 42)
    }

    // MARK: - C.2 single representations

    func testC2LiteralRepresentations() throws {
        var decoder = HPACKDecoder()
        XCTAssertEqual(try decoder.decode(octets("400a637573746f6d2d6b65790d637573746f6d2d686561646572")), fields([("custom-key", "custom-header")]))
        XCTAssertEqual(decoder.dynamicTableSize, 55)
        decoder = HPACKDecoder()
        XCTAssertEqual(try decoder.decode(octets("040c2f73616d706c652f70617468")), fields([(":path", "/sample/path")]))
        XCTAssertEqual(decoder.dynamicTableSize, 0)
        decoder = HPACKDecoder()
        XCTAssertEqual(try decoder.decode(octets("100870617373776f726406736563726574")), fields([("password", "secret")]))
        XCTAssertEqual(decoder.dynamicTableSize, 0, "never indexed stays out of the table")
        decoder = HPACKDecoder()
        XCTAssertEqual(try decoder.decode(octets("82")), fields([(":method", "GET")]))
        XCTAssertEqual(decoder.dynamicTableSize, 0)
    }

    // MARK: - C.3 to C.6 sequences

    private let c3 = ["828684410f7777772e6578616d706c652e636f6d", "828684be58086e6f2d6361636865",
                      "828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565"]
    private let c4 = ["828684418cf1e3c2e5f23a6ba0ab90f4ff", "828684be5886a8eb10649cbf",
                      "828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf"]
    private let c5 = ["4803333032580770726976617465611d4d6f6e2c203231204f637420323031332032303a31333a323120474d546e1768747470733a2f2f7777772e6578616d706c652e636f6d",
                      "4803333037c1c0bf",
                      "88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d54c05a04677a69707738666f6f3d4153444a4b48514b425a584f5157454f50495541585157454f49553b206d61782d6167653d333630303b2076657273696f6e3d31"]
    private let c6 = ["488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3",
                      "4883640effc1c0bf",
                      "88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007"]

    func testC3RequestsWithoutHuffmanDecode() {
        run(c3, requests, sizes: [57, 110, 164], tables: requestTables, maxTableSize: 4096)
    }

    func testC4RequestsWithHuffmanDecode() {
        run(c4, requests, sizes: [57, 110, 164], tables: requestTables, maxTableSize: 4096)
    }

    func testC5ResponsesWithoutHuffmanDecodeWithEviction() {
        run(c5, responses, sizes: [222, 222, 215], tables: responseTables, maxTableSize: 256)
    }

    func testC6ResponsesWithHuffmanDecodeWithEviction() {
        run(c6, responses, sizes: [222, 222, 215], tables: responseTables, maxTableSize: 256)
    }

    func testOurEncoderProducesTheRFCsRequestBlocks() {
        XCTAssertEqual(encode(requests, maxTableSize: 4096, huffman: false), c3)
        XCTAssertEqual(encode(requests, maxTableSize: 4096, huffman: true), c4)
    }

    /// The RFC indexes and compresses `set-cookie`; we send it never indexed and raw, so the third
    /// response differs from C.5.3/C.6.3 exactly there, and the table keeps it out.
    func testOurEncoderProducesTheRFCsResponseBlocksExceptTheCookie() throws {
        for (huffman, expected) in [(false, c5), (true, c6)] {
            let ours = encode(responses, maxTableSize: 256, huffman: huffman)
            XCTAssertEqual(Array(ours.prefix(2)), Array(expected.prefix(2)))
            let cookie = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"
            // 0x1f 0x28: never indexed, name = static 55 (set-cookie); 0x38: 56 raw octets.
            XCTAssertTrue(ours[2].hasSuffix("1f2838" + hexString(Array(cookie.utf8))), ours[2])
            var decoder = HPACKDecoder(maxTableSize: 256)
            for (step, block) in ours.enumerated() {
                XCTAssertEqual(try decoder.decode(octets(block)), fields(responses[step]))
            }
            XCTAssertFalse(decoder.dynamicTableEntries.contains { $0.nameText == "set-cookie" })
        }
    }
}
