/// Text as ISO-8859-1, the inverse of the parser's decoding of field values (`HeaderFields`):
/// ASCII, nearly every value, is the string's own bytes, handed on whole; otherwise each
/// scalar is one byte, and a scalar above 0xFF, which cannot be sent, becomes `?`. Never
/// longer than the string's UTF-8 bytes. One encoding for every writer (an array, a
/// `HeadWriter`), each giving where the bytes go.
enum Latin1 {
    @inline(__always)
    static func encode(_ text: String, _ emit: (UnsafeBufferPointer<UInt8>) -> Void) {
        let ascii = text.utf8.withContiguousStorageIfAvailable { raw -> Bool in
            guard isASCII(raw) else { return false }
            emit(raw)
            return true
        }
        guard ascii != true else { return }
        if ascii == nil, text.utf8.allSatisfy({ $0 < 0x80 }) {
            var text = text
            text.withUTF8 { emit($0) }
            return
        }
        for scalar in text.unicodeScalars {
            var byte = scalar.value < 0x100 ? UInt8(scalar.value) : UInt8(ascii: "?")
            withUnsafePointer(to: &byte) { emit(UnsafeBufferPointer(start: $0, count: 1)) }
        }
    }

    /// Whether no byte has its top bit set, eight at a time.
    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var high: UInt64 = 0
        var offset = 0
        while offset + 8 <= bytes.count {
            high |= raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < bytes.count {
            high |= UInt64(bytes[offset])
            offset += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }
}
