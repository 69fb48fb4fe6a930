/// RFC 7541 §2.3.2 and §4: the entries a context has added, newest first, within a size.
///
/// The size counts 32 + name + value per entry; an entry larger than the whole table empties
/// it and is not added (§4.4). Entries live in a ring so eviction does not move the others.
struct HPACKDynamicTable {
    private var ring: [HPACKField?] = []
    /// `nameKey` of each entry of `ring`, at the same position.
    private var nameKeys: [UInt64] = []
    /// Index in `ring` of the oldest entry.
    private var oldest = 0
    private(set) var count = 0
    private(set) var size = 0
    private(set) var maxSize: Int

    init(maxSize: Int) {
        self.maxSize = maxSize
    }

    /// The entry at HPACK's dynamic index `index` (1 is the newest), or nil past the end.
    subscript(index: Int) -> HPACKField? {
        guard index >= 1, index <= count else { return nil }
        return ring[(oldest + count - index) % ring.count]
    }

    mutating func add(_ field: HPACKField) {
        evict(toFit: maxSize - field.size)
        guard field.size <= maxSize else { return }
        if count == ring.count { grow() }
        ring[(oldest + count) % ring.count] = field
        nameKeys[(oldest + count) % ring.count] = Self.nameKey(field.name)
        count += 1
        size += field.size
    }

    /// What adding an entry larger than the table does (§4.4), for one too large to decode.
    mutating func empty() {
        evict(toFit: 0)
    }

    mutating func resize(_ newMax: Int) {
        maxSize = newMax
        evict(toFit: newMax)
    }

    /// Dynamic index of an entry with `name` (lower-cased when `lowering`) and `value`, and
    /// else of one with its name, for the encoder. Entries are told apart by a key
    /// of their name's length and end bytes first (`nameKeys`, beside the ring): comparing
    /// arrays, or copying entries out of the ring, for every entry and field was most of an
    /// encoder's time.
    func find(name: UnsafeBufferPointer<UInt8>, lowering: Bool, value: UnsafeBufferPointer<UInt8>) -> (exact: Int?, name: Int?) {
        let key = lowering ? Self.nameKey(count: name.count, first: name.first.map(ASCIICase.lower), last: name.last.map(ASCIICase.lower))
                           : Self.nameKey(count: name.count, first: name.first, last: name.last)
        var nameMatch: Int?
        // The keys through a pointer: this loop passes over every newer entry (a new Date
        // each second pushes the others deeper), so each step is a load and a compare.
        let exact: Int? = nameKeys.withUnsafeBufferPointer { keys in
            var position = oldest + count - 1
            if position >= keys.count { position -= keys.count }
            for index in stride(from: 1, through: count, by: 1) {
                if keys[position] == key, let entry = ring[position], entry.name.withUnsafeBufferPointer({ HPACKBytes.equalName(name, lowering: lowering, $0) }) {
                    if entry.value.withUnsafeBufferPointer({ HPACKBytes.equal($0, value) }) { return index }
                    if nameMatch == nil { nameMatch = index }
                }
                position = position == 0 ? keys.count - 1 : position - 1
            }
            return nil
        }
        return exact.map { ($0, $0) } ?? (nil, nameMatch)
    }

    private static func nameKey(_ name: [UInt8]) -> UInt64 {
        nameKey(count: name.count, first: name.first, last: name.last)
    }

    private static func nameKey(count: Int, first: UInt8?, last: UInt8?) -> UInt64 {
        UInt64(truncatingIfNeeded: count) << 16 | UInt64(first ?? 0) << 8 | UInt64(last ?? 0)
    }

    /// Newest first, for tests and diagnostics.
    var entries: [HPACKField] { (0..<count).map { self[$0 + 1]! } }

    private mutating func evict(toFit budget: Int) {
        while size > max(budget, 0), count > 0 {
            size -= ring[oldest]!.size
            ring[oldest] = nil
            oldest = (oldest + 1) % ring.count
            count -= 1
        }
    }

    private mutating func grow() {
        let current = entries.reversed()
        ring = Array(current) + [HPACKField?](repeating: nil, count: max(8, ring.count))
        nameKeys = ring.map { $0.map { Self.nameKey($0.name) } ?? 0 }
        oldest = 0
    }
}
