/// RFC 7541 §6: turns field lists into header blocks.
///
/// Credentials and cookies are never indexed (§7.1.3: an intermediary must not let them be
/// guessed from the table) and never Huffman-coded, whose length would tell how
/// compressible the secret is.
public struct HPACKEncoder: Sendable {
    /// How one field is represented.
    public enum Indexing: Equatable, Sendable {
        case incremental
        case withoutIndexing
        case neverIndexed
    }

    private var table: HPACKDynamicTable
    /// Size updates owed at the start of the next block (§4.2): the smallest size set since the
    /// last block, then the final one, when they differ.
    private var pendingUpdates: [Int] = []

    /// Names whose values are never indexed nor compressed.
    public static let sensitiveNames: Set<[UInt8]> = Set(["authorization", "proxy-authorization", "cookie", "set-cookie"].map { Array($0.utf8) })

    /// Values longer than this are sent without indexing: they would push everything else out.
    public var maxIndexedFieldSize: Int
    /// Huffman-code a string when that is shorter (false only for tests and comparisons).
    public var usesHuffman = true
    /// Where the field at each position of the last block read in place was found whole: the
    /// responses of one connection repeat their fields in the same order, and checking the one
    /// entry found last time costs a fraction of the two table lookups. Only a hint: the entry
    /// is compared with the field before it is used.
    private var foundLastTime: [Found] = []

    /// Hints are kept for this many positions: a head of thousands of tiny fields must not
    /// leave as many behind for the connection's lifetime.
    static let hintedPositions = 32

    private enum Found {
        case nowhere
        case staticEntry(Int)
        /// An entry of the dynamic table by its sequence number (`HPACKDynamicTable.find(sequence:)`).
        case dynamicEntry(sequence: Int)
    }

    public init(maxTableSize: Int = 4096) {
        table = HPACKDynamicTable(maxSize: maxTableSize, searched: true)
        maxIndexedFieldSize = maxTableSize * 3 / 4
    }

    public var dynamicTableSize: Int { table.size }
    public var dynamicTableEntries: [HPACKField] { table.entries }

    /// The peer's SETTINGS_HEADER_TABLE_SIZE: we use at most that much (never more than 4096,
    /// so a peer cannot make us hold a large table).
    public mutating func setMaxTableSize(_ size: Int) {
        let bounded = min(size, 4096)
        guard bounded != table.maxSize || !pendingUpdates.isEmpty else { return }
        if let smallest = pendingUpdates.first, smallest <= bounded {
            pendingUpdates = [smallest, bounded]
        } else {
            pendingUpdates = [bounded]
        }
        table.resize(bounded)
        maxIndexedFieldSize = bounded * 3 / 4
    }

    /// The default choice for a field.
    public static func defaultIndexing(_ field: HPACKField) -> Indexing {
        field.name.withUnsafeBufferPointer(isSensitive) ? .neverIndexed : .incremental
    }

    /// Whether `name` (in any case) is one of `sensitiveNames`: by length, then the one name of that length.
    static func isSensitive(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        let candidate: [UInt8]
        switch name.count {
        case 6: candidate = cookie
        case 10: candidate = setCookie
        case 13: candidate = authorization
        case 19: candidate = proxyAuthorization
        default: return false
        }
        return candidate.withUnsafeBufferPointer { ASCIICase.equalBuffers(name, $0) }
    }

    private static let cookie = Array("cookie".utf8), setCookie = Array("set-cookie".utf8)
    private static let authorization = Array("authorization".utf8), proxyAuthorization = Array("proxy-authorization".utf8)

    /// Each field as `defaultIndexing` chooses, read in place from `fields`.
    public mutating func encode(_ fields: some HPACKHeaderList, into out: inout [UInt8]) {
        writePendingUpdates(into: &out)
        let lowering = fields.namesInAnyCase
        var position = 0
        fields.forEachField { name, value in
            guard position < Self.hintedPositions else {
                return _ = encode(name: name, lowering: lowering, value: value, .incremental, hint: .nowhere, into: &out)
            }
            if position == foundLastTime.count { foundLastTime.append(.nowhere) }
            foundLastTime[position] = encode(name: name, lowering: lowering, value: value, .incremental, hint: foundLastTime[position], into: &out)
            position += 1
        }
    }

    public mutating func encode(_ fields: [(HPACKField, Indexing)], into out: inout [UInt8]) {
        writePendingUpdates(into: &out)
        for (field, requested) in fields {
            field.name.withUnsafeBufferPointer { name in
                field.value.withUnsafeBufferPointer { _ = encode(name: name, lowering: false, value: $0, requested, hint: .nowhere, into: &out) }
            }
        }
    }

    private mutating func writePendingUpdates(into out: inout [UInt8]) {
        guard !pendingUpdates.isEmpty else { return }
        for size in pendingUpdates { HPACKInteger.encode(size, prefixBits: 5, flags: 0x20, into: &out) }
        pendingUpdates = []
    }

    /// One field; `name` sent (and kept in the table) in lower case when `lowering`. Returns
    /// where the field is found whole now, the hint for the same position next time.
    private mutating func encode(name: UnsafeBufferPointer<UInt8>, lowering: Bool, value: UnsafeBufferPointer<UInt8>, _ requested: Indexing,
                                 hint: Found, into out: inout [UInt8]) -> Found {
        // Only a field that may be indexed is ever found (a hint is never one that may not).
        if let index = indexFound(hint, name: name, lowering: lowering, value: value) {
            HPACKInteger.encode(index, prefixBits: 7, flags: 0x80, into: &out)
            return hint
        }
        let sensitive = Self.isSensitive(name)
        let size = 32 + name.count + value.count
        let indexing: Indexing = sensitive ? .neverIndexed : (requested == .incremental && size > maxIndexedFieldSize ? .withoutIndexing : requested)
        let fromStatic = HPACKStaticTable.find(name: name, lowering: lowering, value: value)
        // A never-indexed field is sent as a literal even when the table holds it.
        if indexing != .neverIndexed, let exact = fromStatic.exact {
            HPACKInteger.encode(exact, prefixBits: 7, flags: 0x80, into: &out)
            return .staticEntry(exact)
        }
        let dynamic = table.find(name: name, lowering: lowering, value: value)
        if indexing != .neverIndexed, let exact = dynamic.exact {
            HPACKInteger.encode(exact + HPACKStaticTable.count, prefixBits: 7, flags: 0x80, into: &out)
            return .dynamicEntry(sequence: table.sequence(ofIndex: exact))
        }
        let nameIndex = fromStatic.name ?? dynamic.name.map { $0 + HPACKStaticTable.count } ?? 0
        switch indexing {
        case .incremental: HPACKInteger.encode(nameIndex, prefixBits: 6, flags: 0x40, into: &out)
        case .withoutIndexing: HPACKInteger.encode(nameIndex, prefixBits: 4, flags: 0x00, into: &out)
        case .neverIndexed: HPACKInteger.encode(nameIndex, prefixBits: 4, flags: 0x10, into: &out)
        }
        if nameIndex == 0 { Self.string(name, huffman: usesHuffman && !sensitive, lowercasing: lowering, into: &out) }
        Self.string(value, huffman: usesHuffman && !sensitive, lowercasing: false, into: &out)
        // The table keeps copies: the only arrays an encoded field costs, and only when it is new.
        guard indexing == .incremental else { return .nowhere }
        table.add(HPACKField(name: lowering ? name.map(ASCIICase.lower) : Array(name), value: Array(value)))
        return table.count > 0 ? .dynamicEntry(sequence: table.sequence(ofIndex: 1)) : .nowhere
    }

    /// The index of the entry `hint` names, when it still holds exactly this field.
    private func indexFound(_ hint: Found, name: UnsafeBufferPointer<UInt8>, lowering: Bool, value: UnsafeBufferPointer<UInt8>) -> Int? {
        switch hint {
        case .nowhere:
            return nil
        case .staticEntry(let index):
            return HPACKStaticTable.holds(index, name: name, lowering: lowering, value: value) ? index : nil
        case .dynamicEntry(let sequence):
            return table.index(ofSequence: sequence, ifHolding: name, lowering: lowering, value: value).map { $0 + HPACKStaticTable.count }
        }
    }

    /// Huffman unless it is longer (as the RFC's examples do), or `huffman` is false.
    private static func string(_ bytes: UnsafeBufferPointer<UInt8>, huffman: Bool, lowercasing: Bool, into out: inout [UInt8]) {
        let coded = huffman ? HPACKHuffman.encodedLength(bytes, lowercasing: lowercasing) : bytes.count
        if huffman, coded <= bytes.count {
            HPACKInteger.encode(coded, prefixBits: 7, flags: 0x80, into: &out)
            HPACKHuffman.encode(bytes, lowercasing: lowercasing, into: &out)
        } else {
            HPACKInteger.encode(bytes.count, prefixBits: 7, flags: 0x00, into: &out)
            if lowercasing {
                for byte in bytes { out.append(ASCIICase.lower(byte)) }
            } else {
                out.append(contentsOf: bytes)
            }
        }
    }
}
