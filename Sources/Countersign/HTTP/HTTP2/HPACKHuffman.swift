/// RFC 7541 §5.2 and Appendix B: the static Huffman code for string literals.
///
/// The code is canonical (within each length, codes ascend with the symbol), so the table
/// below holds only each symbol's code length and the codes are derived from it; the RFC's
/// examples and the hpack-test-case corpus check the result.
enum HPACKHuffman {
    /// Code length in bits of symbols 0...255 and of EOS (256), from Appendix B.
    static let codeLengths: [UInt8] = [
        13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
        28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
        6, 10, 10, 12, 13,  6,  8, 11, 10, 10,  8, 11,  8,  6,  6,  6,
        5,  5,  5,  6,  6,  6,  6,  6,  6,  6,  7,  8, 15,  6, 12, 10,
        13,  6,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,
        7,  7,  7,  7,  7,  7,  7,  7,  8,  7,  8, 13, 19, 13, 14,  6,
        15,  5,  6,  5,  6,  5,  6,  6,  6,  5,  7,  7,  6,  6,  6,  5,
        6,  7,  6,  5,  5,  6,  7,  7,  7,  7,  7, 15, 11, 14, 13, 28,
        20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
        24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
        22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
        21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
        26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
        19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
        20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
        26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
        30,
    ]

    static let eos = 256

    /// Each symbol's code, right-aligned in `codeLengths[symbol]` bits.
    static let codes: [UInt32] = {
        let order = (0...256).sorted { (codeLengths[$0], $0) < (codeLengths[$1], $1) }
        var codes = [UInt32](repeating: 0, count: 257)
        var code: UInt32 = 0
        var length = codeLengths[order[0]]
        for symbol in order {
            code <<= UInt32(codeLengths[symbol] - length)
            length = codeLengths[symbol]
            codes[symbol] = code
            code += 1
        }
        return codes
    }()

    /// The encoded length in octets, to choose between Huffman and raw.
    static func encodedLength(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBufferPointer { encodedLength($0, lowercasing: false) }
    }

    static func encodedLength(_ bytes: UnsafeBufferPointer<UInt8>, lowercasing: Bool) -> Int {
        var bits = 0
        for byte in bytes { bits += Int(codeLengths[Int(lowercasing ? ASCIICase.lower(byte) : byte)]) }
        return (bits + 7) / 8
    }

    static func encode(_ bytes: [UInt8], into out: inout [UInt8]) {
        bytes.withUnsafeBufferPointer { encode($0, lowercasing: false, into: &out) }
    }

    /// Encodes `bytes`, each in ASCII lower case when `lowercasing` (a field name as an
    /// HTTP/1.1 head spelled it: HTTP/2 sends names in lower case).
    static func encode(_ bytes: UnsafeBufferPointer<UInt8>, lowercasing: Bool, into out: inout [UInt8]) {
        var accumulator: UInt64 = 0
        var pending = 0
        for original in bytes {
            let byte = lowercasing ? ASCIICase.lower(original) : original
            let length = Int(codeLengths[Int(byte)])
            accumulator = (accumulator << UInt64(length)) | UInt64(codes[Int(byte)])
            pending += length
            while pending >= 8 {
                pending -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt64(pending)))
            }
            accumulator &= (1 << UInt64(pending)) - 1
        }
        if pending > 0 {
            // Pad with the most significant bits of EOS, which are all ones.
            let padding = 8 - pending
            out.append(UInt8(truncatingIfNeeded: (accumulator << UInt64(padding)) | ((1 << UInt64(padding)) - 1)))
        }
    }

    /// Decodes `bytes[range]`, refusing before the output passes `limit` octets.
    static func decode(_ bytes: [UInt8], _ range: Range<Int>, limit: Int) throws(HPACKError) -> [UInt8] {
        try HPACKHuffmanDecoder.shared.decode(bytes, range, limit: limit)
    }
}
