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
    /// Entries ever added: an entry's sequence number is how many came before it, its dynamic
    /// index `added - sequence`.
    private var added = 0
    /// For the encoder's `find`: the sequence numbers of the entries whose name key falls in
    /// each bucket, oldest first (empty for a decoder's table). Without them a lookup passed
    /// over every newer entry, and a Date added each second keeps pushing the others deeper.
    private var buckets: [[Int]]

    /// `searched`: the table answers `find` (an encoder's).
    init(maxSize: Int, searched: Bool = false) {
        self.maxSize = maxSize
        buckets = searched ? [[Int]](repeating: [], count: Self.bucketCount) : []
    }

    private static let bucketCount = 64

    private static func bucket(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 58)
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
        let key = Self.nameKey(field.name)
        ring[(oldest + count) % ring.count] = field
        nameKeys[(oldest + count) % ring.count] = key
        if !buckets.isEmpty { buckets[Self.bucket(key)].append(added) }
        added += 1
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
    /// else of one with its name, for the encoder (a table made `searched`). Only the entries
    /// of the name key's bucket are looked at, newest first, told apart by the key (the name's
    /// length and end bytes, `nameKeys`) before any name is compared.
    func find(name: UnsafeBufferPointer<UInt8>, lowering: Bool, value: UnsafeBufferPointer<UInt8>) -> (exact: Int?, name: Int?) {
        let key = lowering ? Self.nameKey(count: name.count, first: name.first.map(ASCIICase.lower), last: name.last.map(ASCIICase.lower))
                           : Self.nameKey(count: name.count, first: name.first, last: name.last)
        var nameMatch: Int?
        for sequence in buckets[Self.bucket(key)].reversed() {
            let position = (oldest + sequence - (added - count)) % ring.count
            guard nameKeys[position] == key, let entry = ring[position],
                  entry.name.withUnsafeBufferPointer({ HPACKBytes.equalName(name, lowering: lowering, $0) }) else { continue }
            let index = added - sequence
            if entry.value.withUnsafeBufferPointer({ HPACKBytes.equal($0, value) }) { return (index, index) }
            if nameMatch == nil { nameMatch = index }
        }
        return (nil, nameMatch)
    }

    /// The sequence number of the entry at dynamic index `index` (valid while it is held).
    func sequence(ofIndex index: Int) -> Int { added - index }

    /// The dynamic index of the entry numbered `sequence`, if it is still held and is exactly
    /// `name` (lower-cased when `lowering`) and `value`.
    func index(ofSequence sequence: Int, ifHolding name: UnsafeBufferPointer<UInt8>, lowering: Bool, value: UnsafeBufferPointer<UInt8>) -> Int? {
        let index = added - sequence
        guard let entry = self[index], HPACKBytes.holds(entry, name: name, lowering: lowering, value: value) else { return nil }
        return index
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
            // The oldest entry is the first of its bucket: sequence numbers only grow.
            if !buckets.isEmpty { buckets[Self.bucket(nameKeys[oldest])].removeFirst() }
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
