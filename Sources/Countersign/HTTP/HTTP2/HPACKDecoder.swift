/// RFC 7541 §3 and §6: turns header blocks into field lists, carrying the dynamic table from
/// one block to the next.
///
/// Work and memory are bounded by the block's length and by `maxHeaderListSize`: each
/// field's size is checked against what is left before it is kept, so a block that names a
/// large entry many times (an HPACK bomb) stops growing at the limit; the rest of the block
/// costs work in proportion to its octets and keeps nothing.
public struct HPACKDecoder: Sendable {
    private var table: HPACKDynamicTable
    /// What our SETTINGS_HEADER_TABLE_SIZE allows the encoder to use.
    public private(set) var maxTableSizeLimit: Int
    public var maxHeaderListSize: Int

    public init(maxTableSize: Int = 4096, maxHeaderListSize: Int = 65536) {
        table = HPACKDynamicTable(maxSize: maxTableSize)
        maxTableSizeLimit = maxTableSize
        self.maxHeaderListSize = maxHeaderListSize
    }

    /// Our SETTINGS_HEADER_TABLE_SIZE changed and was acknowledged: the peer's encoder may use
    /// up to `limit`; a smaller limit shrinks the table at once.
    public mutating func setMaxTableSizeLimit(_ limit: Int) {
        maxTableSizeLimit = limit
        if table.maxSize > limit { table.resize(limit) }
    }

    public var dynamicTableSize: Int { table.size }
    public var dynamicTableEntries: [HPACKField] { table.entries }

    /// Decodes one block. A list above `maxHeaderListSize` throws `.headerListTooLarge`, but only
    /// after the whole block went through the dynamic table, so the connection can go on: past
    /// the limit no field is kept, and strings are decoded only as far as the table needs them.
    public mutating func decode(_ block: [UInt8]) throws(HPACKError) -> [HPACKField] {
        var fields: [HPACKField] = []
        var listSize = 0
        var index = 0
        var sawField = false
        var overflowed = false
        while index < block.count {
            let first = block[index]
            if first & 0xE0 == 0x20 {
                guard !sawField else { throw .tableSizeUpdateNotAtStart }
                let newSize = try HPACKInteger.decode(block, at: &index, prefixBits: 5)
                guard newSize <= maxTableSizeLimit else { throw .tableSizeAboveLimit(newSize) }
                table.resize(newSize)
                continue
            }
            sawField = true
            var field: HPACKField?
            if first & 0x80 != 0 {
                field = try lookup(try HPACKInteger.decode(block, at: &index, prefixBits: 7))
            } else {
                // 01: with incremental indexing (6-bit index); 0000 without, 0001 never indexed (4-bit).
                let indexing = first & 0xC0 == 0x40
                let nameIndex = try HPACKInteger.decode(block, at: &index, prefixBits: indexing ? 6 : 4)
                let listRoom = overflowed ? 0 : maxHeaderListSize - listSize - 32
                let keepLimit = max(listRoom, indexing ? table.maxSize : 0)
                let name = nameIndex == 0 ? try string(block, &index, limit: keepLimit) : try lookup(nameIndex).name
                let value = try string(block, &index, limit: name.map { keepLimit - $0.count } ?? 0)
                if let name, let value {
                    field = HPACKField(name: name, value: value)
                    if indexing { table.add(field!) }
                } else if indexing {
                    // Longer than the table: such an entry empties it (§4.4).
                    table.empty()
                }
            }
            if !overflowed, let field, field.size <= maxHeaderListSize - listSize {
                listSize += field.size
                fields.append(field)
            } else {
                overflowed = true
                fields = []
            }
        }
        if overflowed { throw .headerListTooLarge }
        return fields
    }

    private func lookup(_ index: Int) throws(HPACKError) -> HPACKField {
        if index >= 1, index <= HPACKStaticTable.count { return HPACKStaticTable.entries[index - 1] }
        guard let field = table[index - HPACKStaticTable.count] else { throw .invalidIndex(index) }
        return field
    }

    /// RFC 7541 §5.2: a length-prefixed string, raw or Huffman; nil (and skipped) when it decodes
    /// to more than `limit` octets.
    private func string(_ block: [UInt8], _ index: inout Int, limit: Int) throws(HPACKError) -> [UInt8]? {
        guard index < block.count else { throw .truncated }
        let huffman = block[index] & 0x80 != 0
        let length = try HPACKInteger.decode(block, at: &index, prefixBits: 7)
        guard length <= block.count - index else { throw .truncated }
        let range = index..<(index + length)
        index += length
        if huffman {
            do {
                return try HPACKHuffman.decode(block, range, limit: max(limit, 0))
            } catch .headerListTooLarge {
                return nil
            }
        }
        guard length <= limit else { return nil }
        return Array(block[range])
    }
}
