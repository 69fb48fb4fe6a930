/// A map that holds at most `capacity` entries and forgets the least recently used one
/// when full. Not thread-safe: `LeafMinter` guards it with its lock.
struct LRUCache<Key: Hashable, Value> {
    private struct Node {
        var key: Key
        var value: Value
        var newer: Int?
        var older: Int?
    }

    let capacity: Int
    private var nodes: [Node] = []
    private var indexByKey: [Key: Int] = [:]
    private var newest: Int?
    private var oldest: Int?

    init(capacity: Int) {
        precondition(capacity > 0, "an LRU cache needs room for at least one entry")
        self.capacity = capacity
    }

    var count: Int { indexByKey.count }

    /// The value for `key`, which becomes the most recently used.
    mutating func value(for key: Key) -> Value? {
        guard let index = indexByKey[key] else { return nil }
        moveToNewest(index)
        return nodes[index].value
    }

    /// Stores `value` as the most recently used, evicting the least recently used when full.
    mutating func set(_ value: Value, for key: Key) {
        if let index = indexByKey[key] {
            nodes[index].value = value
            moveToNewest(index)
            return
        }
        let index: Int
        if nodes.count < capacity {
            index = nodes.count
            nodes.append(Node(key: key, value: value))
        } else {
            index = oldest!
            unlink(index)
            indexByKey[nodes[index].key] = nil
            nodes[index] = Node(key: key, value: value)
        }
        indexByKey[key] = index
        linkAsNewest(index)
    }

    private mutating func moveToNewest(_ index: Int) {
        guard newest != index else { return }
        unlink(index)
        linkAsNewest(index)
    }

    private mutating func unlink(_ index: Int) {
        let node = nodes[index]
        if let newer = node.newer { nodes[newer].older = node.older } else { newest = node.older }
        if let older = node.older { nodes[older].newer = node.newer } else { oldest = node.newer }
        nodes[index].newer = nil
        nodes[index].older = nil
    }

    private mutating func linkAsNewest(_ index: Int) {
        nodes[index].older = newest
        nodes[index].newer = nil
        if let newest { nodes[newest].newer = index }
        newest = index
        if oldest == nil { oldest = index }
    }
}
