import XCTest
@testable import CountersignHTTP

/// What a hostile encoder sends to get past the decoder's rules, and the encoder's promises
/// about secrets.
final class HPACKLimitsTests: XCTestCase {
    private func decodeError(_ block: [UInt8], _ decoder: inout HPACKDecoder) -> HPACKError? {
        do { _ = try decoder.decode(block); return nil } catch { return error }
    }

    private func decodeError(_ block: [UInt8], maxTableSize: Int = 4096, maxHeaderListSize: Int = 65536) -> HPACKError? {
        var decoder = HPACKDecoder(maxTableSize: maxTableSize, maxHeaderListSize: maxHeaderListSize)
        return decodeError(block, &decoder)
    }

    // MARK: - Huffman §5.2

    func testHuffmanRoundTripsEveryOctet() throws {
        let all = (0...255).map { UInt8($0) }
        var coded: [UInt8] = []
        HPACKHuffman.encode(all, into: &coded)
        XCTAssertEqual(coded.count, HPACKHuffman.encodedLength(all))
        XCTAssertEqual(try HPACKHuffman.decode(coded, 0..<coded.count, limit: 256), all)
    }

    func testHuffmanPaddingLongerThanSevenBitsIsRefused() {
        // "a" is 00011: padded with 3 ones is 0x1f; one more all-ones octet makes 11 bits of padding.
        XCTAssertEqual(try HPACKHuffman.decode([0x1F], 0..<1, limit: 10), Array("a".utf8))
        XCTAssertThrowsError(try HPACKHuffman.decode([0x1F, 0xFF], 0..<2, limit: 10)) { XCTAssertEqual($0 as? HPACKError, .invalidHuffman) }
    }

    func testHuffmanPaddingThatIsNotEOSsPrefixIsRefused() {
        // 00011 then 000: a padding of zeros.
        XCTAssertThrowsError(try HPACKHuffman.decode([0x18], 0..<1, limit: 10)) { XCTAssertEqual($0 as? HPACKError, .invalidHuffman) }
    }

    func testHuffmanEOSInsideTheStringIsRefused() {
        // 30 ones (EOS) then two padding ones: four 0xff octets.
        XCTAssertThrowsError(try HPACKHuffman.decode([0xFF, 0xFF, 0xFF, 0xFF], 0..<4, limit: 10)) { XCTAssertEqual($0 as? HPACKError, .invalidHuffman) }
    }

    // MARK: - Integers and indices

    func testIntegerPastThirtyOneBitsIsRefused() {
        XCTAssertEqual(decodeError([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]), .integerOverflow)
        XCTAssertEqual(decodeError([0xFF, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]), .integerOverflow, "zero padding is not a way around the bound")
    }

    func testIndexZeroAndPastTheTablesAreRefused() {
        XCTAssertEqual(decodeError([0x80]), .invalidIndex(0))
        XCTAssertEqual(decodeError([0xBE]), .invalidIndex(62), "the dynamic table is empty")
    }

    func testTruncatedBlocksAreRefused() {
        XCTAssertEqual(decodeError([0x40, 0x05, 0x61]), .truncated)
        XCTAssertEqual(decodeError([0x41]), .truncated)
    }

    // MARK: - Table size updates §4.2, §6.3

    func testSizeUpdateAboveOurSettingIsRefused() {
        XCTAssertEqual(decodeError([0x3F, 0xE2, 0x1F], maxTableSize: 4096), .tableSizeAboveLimit(4097))
        XCTAssertNil(decodeError([0x3F, 0xE1, 0x1F], maxTableSize: 4096))
    }

    func testSizeUpdateAfterAFieldIsRefused() {
        XCTAssertEqual(decodeError([0x82, 0x20]), .tableSizeUpdateNotAtStart)
        XCTAssertNil(decodeError([0x20, 0x3F, 0xE1, 0x1F, 0x82]), "two updates at the start are allowed")
    }

    func testSizeUpdateToZeroEmptiesTheTable() throws {
        var decoder = HPACKDecoder()
        _ = try decoder.decode(octets("400a637573746f6d2d6b65790d637573746f6d2d686561646572"))
        XCTAssertEqual(decoder.dynamicTableSize, 55)
        XCTAssertEqual(try decoder.decode([0x20, 0x82]), fields([(":method", "GET")]))
        XCTAssertEqual(decoder.dynamicTableSize, 0)
        XCTAssertEqual(decodeError([0xBE], &decoder), .invalidIndex(62))
    }

    // MARK: - Bombs and list size

    /// One 4000-octet entry referenced 10 000 times in a 10 kB block: 40 MB if decoded; the list
    /// limit stops it at the first reference that crosses it.
    func testAnHPACKBombStopsAtTheListLimitBeforeCopying() {
        var block: [UInt8] = [0x40]
        HPACKInteger.encode(1, prefixBits: 7, flags: 0, into: &block)
        block.append(0x78)
        HPACKInteger.encode(4000, prefixBits: 7, flags: 0, into: &block)
        block += [UInt8](repeating: 0x61, count: 4000)
        block += [UInt8](repeating: 0xBE, count: 10_000)
        var decoder = HPACKDecoder(maxTableSize: 4096, maxHeaderListSize: 16384)
        XCTAssertEqual(decodeError(block, &decoder), .headerListTooLarge)
    }

    /// Past the limit the block still goes through the table: the next block, which names the
    /// entries added after the limit was crossed, decodes as the encoder meant.
    func testAfterAListAboveTheLimitTheTableIsStillInStep() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder(maxTableSize: 4096, maxHeaderListSize: 250)
        var block: [UInt8] = []
        let large = fields([("x-a", String(repeating: "a", count: 150)), ("x-b", String(repeating: "b", count: 150)), ("x-c", "c")])
        encoder.encode(large, into: &block)
        XCTAssertEqual(decodeError(block, &decoder), .headerListTooLarge)
        XCTAssertEqual(decoder.dynamicTableEntries, encoder.dynamicTableEntries)
        block = []
        encoder.encode(fields([("x-c", "c"), ("x-b", String(repeating: "b", count: 150))]), into: &block)
        XCTAssertEqual(block.count, 2, "two references to the table")
        XCTAssertEqual(try decoder.decode(block), fields([("x-c", "c"), ("x-b", String(repeating: "b", count: 150))]))
    }

    /// An indexed literal too large for the table, past the list limit, empties the table as it
    /// would have (§4.4) without being decoded whole.
    func testAnOversizedIndexedLiteralPastTheLimitEmptiesTheTable() throws {
        var decoder = HPACKDecoder(maxTableSize: 100, maxHeaderListSize: 100)
        _ = try decoder.decode(octets("400a637573746f6d2d6b65790d637573746f6d2d686561646572"))
        XCTAssertEqual(decoder.dynamicTableSize, 55)
        var block: [UInt8] = [0x40, 0x01, 0x78]
        HPACKInteger.encode(5000, prefixBits: 7, flags: 0, into: &block)
        block += [UInt8](repeating: 0x62, count: 5000)
        XCTAssertEqual(decodeError(block, &decoder), .headerListTooLarge)
        XCTAssertEqual(decoder.dynamicTableSize, 0)
    }

    func testALiteralLongerThanTheListLimitIsRefusedBeforeItIsCopied() {
        var block: [UInt8] = [0x00, 0x01, 0x78]
        HPACKInteger.encode(20_000, prefixBits: 7, flags: 0, into: &block)
        block += [UInt8](repeating: 0x61, count: 20_000)
        XCTAssertEqual(decodeError(block, maxHeaderListSize: 16384), .headerListTooLarge)
        var huffman: [UInt8] = [0x00, 0x01, 0x78]
        HPACKInteger.encode(12_000, prefixBits: 7, flags: 0x80, into: &huffman)
        huffman += [UInt8](repeating: 0x00, count: 12_000) // "000000..." codes 0, 19 200 octets decoded
        XCTAssertEqual(decodeError(huffman, maxHeaderListSize: 16384), .headerListTooLarge)
    }

    func testAnEntryLargerThanTheTableEmptiesIt() throws {
        var decoder = HPACKDecoder(maxTableSize: 100)
        _ = try decoder.decode(octets("400a637573746f6d2d6b65790d637573746f6d2d686561646572"))
        XCTAssertEqual(decoder.dynamicTableSize, 55)
        var block: [UInt8] = [0x40, 0x01, 0x78, 0x50]
        block += [UInt8](repeating: 0x62, count: 80)
        _ = try decoder.decode(block)
        XCTAssertEqual(decoder.dynamicTableSize, 0)
    }

    // MARK: - Encoder

    func testCredentialsAndCookiesAreNeverIndexedNorHuffmanCoded() throws {
        var encoder = HPACKEncoder()
        var block: [UInt8] = []
        let secrets = [("authorization", "Bearer abcdefabcdef"), ("proxy-authorization", "Basic c3ZjOnNlY3JldA=="),
                       ("cookie", "session=aaaaaaaaaaaa"), ("set-cookie", "id=bbbbbbbbbbbb")]
        encoder.encode(fields(secrets), into: &block)
        encoder.encode(fields(secrets), into: &block)
        XCTAssertEqual(encoder.dynamicTableSize, 0)
        for (_, value) in secrets {
            let raw = Array(value.utf8)
            var occurrences = 0
            for start in 0...(block.count - raw.count) where Array(block[start..<start + raw.count]) == raw { occurrences += 1 }
            XCTAssertEqual(occurrences, 2, "\(value) is sent raw each time, never by reference")
        }
        var decoder = HPACKDecoder()
        XCTAssertEqual(try decoder.decode(block), fields(secrets + secrets))
        // Never-indexed representations: 0001xxxx.
        XCTAssertEqual(block[0] & 0xF0, 0x10)
    }

    func testTheEncoderSignalsATableShrinkAtTheNextBlock() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        var block: [UInt8] = []
        encoder.encode(fields([("x-a", "1")]), into: &block)
        _ = try decoder.decode(block)
        encoder.setMaxTableSize(0)
        encoder.setMaxTableSize(100)
        block = []
        encoder.encode(fields([("x-a", "1")]), into: &block)
        XCTAssertEqual(Array(block.prefix(3)), [0x20, 0x3F, 0x45], "the smallest size then the final one")
        XCTAssertEqual(try decoder.decode(block), fields([("x-a", "1")]))
        XCTAssertEqual(decoder.dynamicTableEntries, encoder.dynamicTableEntries)
    }

    func testAPeerCannotMakeOurEncoderHoldMoreThan4096Octets() {
        var encoder = HPACKEncoder()
        encoder.setMaxTableSize(1 << 30)
        var block: [UInt8] = []
        encoder.encode((0..<200).map { HPACKField("x-\($0)", String(repeating: "v", count: 100)) }, into: &block)
        XCTAssertLessThanOrEqual(encoder.dynamicTableSize, 4096)
    }
}
