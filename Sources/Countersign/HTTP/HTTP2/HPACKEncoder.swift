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

    public init(maxTableSize: Int = 4096) {
        table = HPACKDynamicTable(maxSize: maxTableSize)
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
        isSensitive(field.name) ? .neverIndexed : .incremental
    }

    /// Whether `name` is one of `sensitiveNames`: by length, then the one name of that length.
    static func isSensitive(_ name: [UInt8]) -> Bool {
        switch name.count {
        case 6: return name == cookie
        case 10: return name == setCookie
        case 13: return name == authorization
        case 19: return name == proxyAuthorization
        default: return false
        }
    }

    private static let cookie = Array("cookie".utf8), setCookie = Array("set-cookie".utf8)
    private static let authorization = Array("authorization".utf8), proxyAuthorization = Array("proxy-authorization".utf8)

    public mutating func encode(_ fields: [HPACKField], into out: inout [UInt8]) {
        writePendingUpdates(into: &out)
        for field in fields { encode(field, Self.defaultIndexing(field), into: &out) }
    }

    public mutating func encode(_ fields: [(HPACKField, Indexing)], into out: inout [UInt8]) {
        writePendingUpdates(into: &out)
        for (field, requested) in fields { encode(field, requested, into: &out) }
    }

    private mutating func writePendingUpdates(into out: inout [UInt8]) {
        guard !pendingUpdates.isEmpty else { return }
        for size in pendingUpdates { HPACKInteger.encode(size, prefixBits: 5, flags: 0x20, into: &out) }
        pendingUpdates = []
    }

    private mutating func encode(_ field: HPACKField, _ requested: Indexing, into out: inout [UInt8]) {
        let sensitive = Self.isSensitive(field.name)
        let indexing: Indexing = sensitive ? .neverIndexed : (requested == .incremental && field.size > maxIndexedFieldSize ? .withoutIndexing : requested)
        let fromStatic = HPACKStaticTable.find(field)
        // A never-indexed field is sent as a literal even when the table holds it.
        if indexing != .neverIndexed, let exact = fromStatic.exact {
            HPACKInteger.encode(exact, prefixBits: 7, flags: 0x80, into: &out)
            return
        }
        let dynamic = table.find(field)
        if indexing != .neverIndexed, let exact = dynamic.exact {
            HPACKInteger.encode(exact + HPACKStaticTable.count, prefixBits: 7, flags: 0x80, into: &out)
            return
        }
        let nameIndex = fromStatic.name ?? dynamic.name.map { $0 + HPACKStaticTable.count } ?? 0
        switch indexing {
        case .incremental: HPACKInteger.encode(nameIndex, prefixBits: 6, flags: 0x40, into: &out)
        case .withoutIndexing: HPACKInteger.encode(nameIndex, prefixBits: 4, flags: 0x00, into: &out)
        case .neverIndexed: HPACKInteger.encode(nameIndex, prefixBits: 4, flags: 0x10, into: &out)
        }
        if nameIndex == 0 { Self.string(field.name, huffman: usesHuffman && !sensitive, into: &out) }
        Self.string(field.value, huffman: usesHuffman && !sensitive, into: &out)
        if indexing == .incremental { table.add(field) }
    }

    /// Huffman unless it is longer (as the RFC's examples do), or `huffman` is false.
    private static func string(_ bytes: [UInt8], huffman: Bool, into out: inout [UInt8]) {
        let coded = huffman ? HPACKHuffman.encodedLength(bytes) : bytes.count
        if huffman, coded <= bytes.count {
            HPACKInteger.encode(coded, prefixBits: 7, flags: 0x80, into: &out)
            HPACKHuffman.encode(bytes, into: &out)
        } else {
            HPACKInteger.encode(bytes.count, prefixBits: 7, flags: 0x00, into: &out)
            out.append(contentsOf: bytes)
        }
    }
}
