import CountersignSupport

/// Digest sessions lent by the store to the preemptive candidates of one learned space (the
/// shelf carries over when the plan is remade) and kept there between answers: an answer takes
/// one off the shelf and its completion puts it back, with no store lookup, byte accounting or
/// store lock per request. A session on the shelf or out with an exchange is lent, as the
/// store's sessions are, to one exchange at a time: its counts reach the server in order.
///
/// Counts stay strictly increasing per nonce across every session and worker. The store gives
/// them in blocks (`ProtectionSpaceStore.reserveNonceCounts`), so a count used from here is
/// given to no other session; when another session takes counts of a nonce a shelved one holds
/// (a server that hands one nonce to parallel connections), the shelved one reserves anew past
/// them before its next answer (`ProtectionSpaceStore.countsEpoch`). When the shelf goes (its
/// space is no longer answered ahead and the last exchange that used it ended), its sessions
/// return to the store, which takes back the counts reserved and not used when no one counted
/// past them: a server that wants the exact next count (Apache's `AuthDigestNcCheck`) sees no gap.
final class DigestSessionShelf: @unchecked Sendable {
    let space: ProtectionSpace
    private let store: ProtectionSpaceStore
    private let lock = Mutex(())
    /// Each with its cost, measured once when it is shelved (not again when taken).
    private var sessions: [(session: DigestSession, cost: Int)] = []
    /// What the shelved sessions hold, by the store's measure (`ProtectionSpaceStore.cost`).
    private var bytes = 0

    /// Counts the store gives a shelved session at a time.
    static let countsPerReservation: UInt32 = 64
    /// What a shelf keeps at most: a session past these goes back to the store, which
    /// holds each target to its byte budget.
    static let maxSessions = 64
    static let maxBytes = 16 * 1024

    init(space: ProtectionSpace, store: ProtectionSpaceStore) {
        self.space = space
        self.store = store
    }

    deinit {
        for shelved in sessions { store.returnDigestSession(shelved.session, to: space) }
    }

    /// A session for the next answer with a count reserved for it (`nonceCount` below it): off
    /// the shelf, or lent by the store; nil while every session of the space is out.
    func take() -> DigestSession? {
        let shelved: DigestSession? = lock.withLock { _ in
            guard let shelved = sessions.popLast() else { return nil }
            bytes -= shelved.cost
            return shelved.session
        }
        guard var session = shelved ?? store.leaseDigestSession(space) else { return nil }
        if !session.hasReservedCount || session.reservedEpoch != store.countsEpoch {
            store.reserveNonceCounts(&session, Self.countsPerReservation, in: space)
        }
        return session
    }

    /// A session whose answer went through, back for the next (its `nextnonce` adopted).
    func giveBack(_ session: DigestSession) {
        let cost = ProtectionSpaceStore.cost(session)
        let kept = lock.withLock { _ in
            guard sessions.count < Self.maxSessions, bytes + cost <= Self.maxBytes else { return false }
            sessions.append((session, cost))
            bytes += cost
            return true
        }
        if !kept { store.returnDigestSession(session, to: space) }
    }
}
