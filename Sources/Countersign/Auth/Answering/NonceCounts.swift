/// The highest count given out for each Digest nonce of one protection space. A space has a
/// handful (one per live session, at most `ProtectionSpaceStore.maxCountedNonces`), so they are
/// a list found by comparing the nonce, not a dictionary that hashes a nonce of 50 bytes or more
/// twice on every answer.
struct NonceCounts: Sendable {
    private var counts: [(nonce: String, count: UInt32)] = []

    init() {}

    init(_ nonce: String, count: UInt32) {
        counts = [(nonce, count)]
    }

    var count: Int { counts.count }
    var nonces: LazyMapSequence<[(nonce: String, count: UInt32)], String> { counts.lazy.map { $0.nonce } }

    subscript(nonce: String) -> UInt32? {
        get { counts.first { $0.nonce == nonce }?.count }
        set {
            guard let index = counts.firstIndex(where: { $0.nonce == nonce }) else {
                if let newValue { counts.append((nonce, newValue)) }
                return
            }
            if let newValue { counts[index].count = newValue } else { counts.remove(at: index) }
        }
    }

    /// Drops the counts of the nonces `keep` says no to.
    mutating func keepOnly(_ keep: (String) -> Bool) {
        counts.removeAll { !keep($0.nonce) }
    }
}
