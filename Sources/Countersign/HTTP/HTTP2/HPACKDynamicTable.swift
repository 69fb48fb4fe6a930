/// RFC 7541 §2.3.2 and §4: the entries a context has added, newest first, within a size.
///
/// The size counts 32 + name + value per entry; an entry larger than the whole table empties
/// it and is not added (§4.4). Entries live in a ring so eviction does not move the others.
struct HPACKDynamicTable {
    private var ring: [HPACKField?] = []
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

    /// Dynamic index of an entry equal to `field`, and else of one with its name, for the encoder.
    func find(_ field: HPACKField) -> (exact: Int?, name: Int?) {
        var nameMatch: Int?
        for index in stride(from: 1, through: count, by: 1) {
            let entry = self[index]!
            if entry.name == field.name {
                if entry.value == field.value { return (index, index) }
                if nameMatch == nil { nameMatch = index }
            }
        }
        return (nil, nameMatch)
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
        oldest = 0
    }
}
