/// RFC 7541 §3 and §6: turns header blocks into field lists, carrying the dynamic table from
/// one block to the next.
///
/// Work and memory are bounded by the block's length and by `maxHeaderListSize`: each
/// field's size is checked against what is left before its octets are copied, so a block
/// that names a large entry many times (an HPACK bomb) stops at the limit instead of growing.
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

    public mutating func decode(_ block: [UInt8]) throws(HPACKError) -> [HPACKField] {
        var fields: [HPACKField] = []
        var listSize = 0
        var index = 0
        var sawField = false
        while index < block.count {
            let first = block[index]
            if first & 0x80 != 0 {
                let field = try lookup(try HPACKInteger.decode(block, at: &index, prefixBits: 7))
                try account(field.size, &listSize)
                fields.append(field)
                sawField = true
            } else if first & 0xE0 == 0x20 {
                guard !sawField else { throw .tableSizeUpdateNotAtStart }
                let newSize = try HPACKInteger.decode(block, at: &index, prefixBits: 5)
                guard newSize <= maxTableSizeLimit else { throw .tableSizeAboveLimit(newSize) }
                table.resize(newSize)
            } else {
                // 01: with incremental indexing (6-bit index); 0000 without, 0001 never indexed (4-bit).
                let indexing = first & 0xC0 == 0x40
                let nameIndex = try HPACKInteger.decode(block, at: &index, prefixBits: indexing ? 6 : 4)
                let budget = maxHeaderListSize - listSize - 32
                let name = nameIndex == 0 ? try string(block, &index, limit: budget) : try lookup(nameIndex).name
                let value = try string(block, &index, limit: budget - name.count)
                let field = HPACKField(name: name, value: value)
                try account(field.size, &listSize)
                if indexing { table.add(field) }
                fields.append(field)
                sawField = true
            }
        }
        return fields
    }

    private func lookup(_ index: Int) throws(HPACKError) -> HPACKField {
        if index >= 1, index <= HPACKStaticTable.count { return HPACKStaticTable.entries[index - 1] }
        guard let field = table[index - HPACKStaticTable.count] else { throw .invalidIndex(index) }
        return field
    }

    private func account(_ size: Int, _ listSize: inout Int) throws(HPACKError) {
        guard size <= maxHeaderListSize - listSize else { throw .headerListTooLarge }
        listSize += size
    }

    /// RFC 7541 §5.2: a length-prefixed string, raw or Huffman, at most `limit` octets decoded.
    private func string(_ block: [UInt8], _ index: inout Int, limit: Int) throws(HPACKError) -> [UInt8] {
        guard index < block.count else { throw .truncated }
        let huffman = block[index] & 0x80 != 0
        let length = try HPACKInteger.decode(block, at: &index, prefixBits: 7)
        guard length <= block.count - index else { throw .truncated }
        let range = index..<(index + length)
        index += length
        if huffman { return try HPACKHuffman.decode(block, range, limit: max(limit, 0)) }
        guard length <= limit else { throw .headerListTooLarge }
        return Array(block[range])
    }
}
