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
}
