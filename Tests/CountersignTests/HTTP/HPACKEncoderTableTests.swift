import XCTest
@testable import CountersignHTTP

/// The encoder finds table entries by their name key's bucket and a sequence number: whatever
/// was added, evicted, grown or resized, the indices it sends name the entries the peer's
/// decoder holds.
final class HPACKEncoderTableTests: XCTestCase {
    func testIndicesStayInStepWithTheDecoderThroughEvictionsAndResizes() throws {
        var encoder = HPACKEncoder(maxTableSize: 4096)
        var decoder = HPACKDecoder(maxTableSize: 4096)
        var random = SeededGenerator(state: 25)
        let names = ["date", "server", "etag", "x-a", "x-b", "x-request-id", "content-type", "via", "Last-Modified"]
        var (sent, literal) = (0, 0)
        for round in 0..<600 {
            if round == 200 { encoder.setMaxTableSize(300) }
            if round == 400 { encoder.setMaxTableSize(4096) }
            var list: [HPACKField] = []
            for _ in 0..<(1 + random.next() % 8) {
                let name = names[Int(random.next() % UInt64(names.count))].lowercased()
                // Few values per name, so that entries repeat and are found again.
                list.append(HPACKField(name, "v\(random.next() % 4)" + String(repeating: "x", count: 10 * Int(random.next() % 3))))
            }
            var block: [UInt8] = []
            encoder.encode(list, into: &block)
            sent += block.count
            literal += list.reduce(0) { $0 + $1.name.count + $1.value.count }
            XCTAssertEqual(try decoder.decode(block), list, "round \(round)")
            XCTAssertEqual(encoder.dynamicTableEntries, decoder.dynamicTableEntries, "round \(round)")
        }
        XCTAssertLessThan(sent * 2, literal, "entries were found again, not only added (Huffman alone saves far less)")
    }

    /// The same response's fields again, in the same order: each goes as one octet (an index),
    /// found through where the last block found it. A field that changed at its position, an
    /// entry evicted meanwhile, a name in another case, a credential: each is still sent as it
    /// should be, and the decoder gets every block exactly.
    func testRepeatedBlocksAreIndexedFromTheLastBlockAndChangesAreNot() throws {
        struct AnyCaseNames: HPACKHeaderList {
            let fields: [HPACKField]
            var namesInAnyCase: Bool { true }
            func forEachField(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) { fields.forEachField(body) }
        }
        var encoder = HPACKEncoder(maxTableSize: 4096)
        var decoder = HPACKDecoder(maxTableSize: 4096)
        func response(etag: String, cookie: String = "") -> [HPACKField] {
            [HPACKField(":status", "200"), HPACKField("Server", "nginx"), HPACKField("ETag", etag), HPACKField("Content-Length", "1024"),
             HPACKField("Set-Cookie", cookie), HPACKField("Via", "2 countersign")]
        }
        func lowered(_ fields: [HPACKField]) -> [HPACKField] { fields.map { HPACKField(name: $0.name.map(ASCIICase.lower), value: $0.value) } }
        func send(_ fields: [HPACKField]) throws -> [UInt8] {
            var block: [UInt8] = []
            encoder.encode(AnyCaseNames(fields: fields), into: &block)
            XCTAssertEqual(try decoder.decode(block), lowered(fields))
            XCTAssertEqual(encoder.dynamicTableEntries, decoder.dynamicTableEntries)
            return block
        }
        _ = try send(response(etag: "a", cookie: "id=1"))
        // All indexed but the cookie, a literal never indexed each time (value and all).
        let again = try send(response(etag: "a", cookie: "id=1"))
        let cookieLiteral = 2 + 1 + 4  // never indexed: the static name's index (two octets), the length, "id=1"
        XCTAssertEqual(again.count, 5 + cookieLiteral, "\(again)")
        // Another value at the ETag position: a literal (and a new entry), the rest indexed.
        let changed = try send(response(etag: "b", cookie: "id=1"))
        XCTAssertGreaterThan(changed.count, again.count)
        XCTAssertEqual(try send(response(etag: "b", cookie: "id=1")).count, again.count)
        // The other value again: found by the lookup (the hint names the "b" entry), then by the hint.
        XCTAssertEqual(try send(response(etag: "a", cookie: "id=1")).count, again.count)
        // Entries evicted under the hints: shrinking the table, then growing it, sends literals again.
        encoder.setMaxTableSize(0)
        encoder.setMaxTableSize(4096)
        let afterEviction = try send(response(etag: "a", cookie: "id=1"))
        XCTAssertGreaterThan(afterEviction.count, again.count + 2)
        XCTAssertEqual(try send(response(etag: "a", cookie: "id=1")).count, again.count)
        // Fewer fields, then more: positions past the last block's have no hint.
        _ = try send(Array(response(etag: "a").prefix(2)))
        _ = try send(response(etag: "c") + [HPACKField("X-Extra", "1")])
        // Past the positions that keep hints, fields are found by lookup alone, and still indexed.
        let many = (0..<(HPACKEncoder.hintedPositions + 8)).map { HPACKField("X-F\($0)", "v") }
        _ = try send(many)
        XCTAssertEqual(try send(many).count, many.count, "every field an index of one octet")
    }
}
