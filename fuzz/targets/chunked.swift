// libFuzzer entry point for the chunked decoder, driven the way the I/O shell drives it: lines
// split on CRLF, data counted through. It must never accept data longer than a chunk's size
// and never move backwards.

@_cdecl("LLVMFuzzerTestOneInput")
public func chunkedFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    var decoder = ChunkedDecoder(maxTrailerBytes: 512)
    var index = 0
    var dataBytes: UInt64 = 0
    while index < size {
        switch decoder.need {
        case .done:
            return 0
        case .data(let remaining):
            let take = min(remaining, UInt64(size - index))
            precondition(take > 0, "the decoder asked for zero data bytes")
            decoder.consumedData(take)
            dataBytes += take
            index += Int(take)
        case .line:
            var end = index
            while end + 1 < size, !(bytes[end] == 0x0D && bytes[end + 1] == 0x0A) { end += 1 }
            guard end + 1 < size else { return 0 }
            let line = UnsafeRawBufferPointer(rebasing: bytes[index..<end])
            guard line.count <= ChunkedDecoder.maxLineLength else { return 0 }
            guard (try? decoder.consumeLine(line)) != nil else { return 0 }
            index = end + 2
        }
    }
    return 0
}
