// libFuzzer entry point for the HPACK decoder: the input is a sequence of header blocks, each
// prefixed by a two-octet length, decoded in order by one decoder (the dynamic table carried
// from block to block, as on a connection). Whatever the octets, the decoder must refuse or
// return a list within its limit, keep its table within its size, and what it returns must
// survive our encoder and decoder unchanged.

@_cdecl("LLVMFuzzerTestOneInput")
public func hpackFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var decoder = HPACKDecoder(maxTableSize: 4096, maxHeaderListSize: 8192)
    var encoder = HPACKEncoder(maxTableSize: 4096)
    var roundTrip = HPACKDecoder(maxTableSize: 4096, maxHeaderListSize: 1 << 20)
    var index = 0
    while index + 2 <= size {
        let length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
        index += 2
        let block = Array(bytes[index..<min(size, index + length)])
        index += block.count
        guard let fields = try? decoder.decode(block) else { return 0 }
        precondition(fields.reduce(0) { $0 + $1.size } <= 8192, "a list above the limit came back")
        precondition(decoder.dynamicTableSize <= decoder.maxTableSizeLimit, "the table grew past its limit")
        var encoded: [UInt8] = []
        encoder.encode(fields, into: &encoded)
        guard let again = try? roundTrip.decode(encoded) else { preconditionFailure("our own block does not decode") }
        precondition(again == fields, "a list changed through our encoder")
        precondition(roundTrip.dynamicTableEntries == encoder.dynamicTableEntries, "encoder and decoder tables diverged")
    }
    return 0
}
