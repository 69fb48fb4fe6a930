import Foundation
import CountersignSupport
import struct Synchronization.Atomic

/// Learned state shared by all workers, behind one lock; the "permanent" entries go to and
/// come back from `state_dir` through `AuthStateFile`.
public final class ProtectionSpaceStore: @unchecked Sendable {
    private let lock = Mutex(())
    private var entries: [ProtectionSpace: LearnedSpace] = [:]
    /// Each space's idle Digest sessions and nonce counts, in one object found by one lookup
    /// (a preemptive Digest answer leases a session and reserves a count; it comes back after).
    private var digest: [ProtectionSpace: DigestSpaceState] = [:]
    /// What each space's server has shown about its credential (`SpaceStanding`), with when it
    /// was last touched (the least recently touched goes first when a target has too many).
    /// A lock-out lives here until the configuration reloads (a new store).
    private var standings: [ProtectionSpace: (standing: SpaceStanding, touched: UInt64)] = [:]
    private var touches: UInt64 = 0
    /// Moves on whenever what a preemptive answer is chosen from changes (a space learned,
    /// forgotten, locked out or let go): `PreemptivePlans` made at an older one are remade.
    /// Read without the lock (every request reads it); moved on under it, after the change.
    private let generation = Atomic<UInt64>(0)
    /// Bytes of learned state (`cost(of:)`) per space and per host and port, kept current on
    /// every change: a target's state is bounded by `maxBytesPerTarget`, whatever its server sends.
    /// Moves on whenever counts are taken for a nonce another session had counted past this one
    /// (one nonce handed to parallel connections): a shelved session's block of counts
    /// reserved before then may lie below them, so it reserves anew. Read without the lock.
    private let countsMoved = Atomic<UInt64>(0)
    private var spaceBytes: [ProtectionSpace: Int] = [:]
    private var targetBytes: [AuthTarget: Int] = [:]

    public init() {}

    public func learn(_ entry: LearnedSpace) {
        guard entry.persistence != .none else { return }
        locked {
            if entries[entry.space] == nil { makeRoom(for: entry.space.target) }
            entries[entry.space] = entry
            moveGeneration()
            changed(entry.space)
        }
    }

    /// A host and port keep at most `maxSpacesPerTarget` learned spaces: a server that names a
    /// new realm for each request (and accepts the answer) must not grow this store, or the
    /// preemptive search, without bound. The least recently learned goes.
    private func makeRoom(for target: AuthTarget) {
        let sameTarget = entries.values.filter { $0.space.target == target }
        guard sameTarget.count >= Self.maxSpacesPerTarget,
              let oldest = sameTarget.min(by: { $0.learnedAt < $1.learnedAt })?.space else { return }
        drop(oldest)
    }

    /// Everything learned of `space` goes (its standing stays).
    private func drop(_ space: ProtectionSpace) {
        if entries.removeValue(forKey: space) != nil { moveGeneration() }
        digest[space] = nil
        account(space)
    }

    // MARK: Byte budget

    /// Learned state per host and port, in bytes: a server choosing realms, nonces and opaques
    /// cannot make the proxy keep more than this for it (a few hundred well-behaved spaces).
    static let maxBytesPerTarget = 256 * 1024

    /// What `space` holds, counting what its server chose (realm, nonces, opaque) and a fixed
    /// overhead per item.
    private func cost(of space: ProtectionSpace) -> Int {
        var bytes = 0
        if let entry = entries[space] {
            bytes += 96 + (space.realm?.utf8.count ?? 0) + entry.credentialName.utf8.count + (entry.digest.map(Self.cost) ?? 0)
        }
        if let state = digest[space] {
            for session in state.idle { bytes += Self.cost(session) }
            for nonce in state.counts.nonces { bytes += 32 + nonce.utf8.count }
        }
        return bytes
    }

    static func cost(_ session: DigestSession) -> Int { session.heldBytes }

    /// Accounts for a change to `space`, then brings its target back under budget: the other
    /// spaces least recently learned go first, then this space's oldest idle sessions and counts.
    private func changed(_ space: ProtectionSpace) {
        account(space)
        enforceBudget(after: space)
    }

    /// `changed` for a change whose size is known: `delta` bytes added to `space` (negative:
    /// freed), without recounting what the space holds (every Digest answer returns a session).
    /// One lookup per count; the budget is only checked when the target grew past it.
    private func changed(_ space: ProtectionSpace, by delta: Int) {
        guard delta != 0 else { return }
        let now = Self.add(delta, to: &spaceBytes[space])
        let total = Self.add(delta, to: &targetBytes[space.target])
        assert(now == cost(of: space), "the byte count of \(space) drifted from what it holds")
        if delta > 0, total > Self.maxBytesPerTarget { enforceBudget(after: space) }
    }

    /// Adds `delta` to a count kept only while it is not zero; returns the new count.
    private static func add(_ delta: Int, to count: inout Int?) -> Int {
        let now = (count ?? 0) + delta
        count = now == 0 ? nil : now
        return now
    }

    private func enforceBudget(after space: ProtectionSpace) {
        let target = space.target
        func over() -> Bool { (targetBytes[target] ?? 0) > Self.maxBytesPerTarget }
        guard over() else { return }
        let others = spaceBytes.keys.filter { $0.target == target && $0 != space }
            .sorted { (entries[$0]?.learnedAt ?? .distantPast) < (entries[$1]?.learnedAt ?? .distantPast) }
        for other in others where over() { drop(other) }
        while over(), let state = digest[space], !state.idle.isEmpty {
            state.idle.removeFirst()
            account(space)
        }
        if over(), let state = digest[space] {
            state.counts = NonceCounts()
            account(space)
        }
    }

    private func account(_ space: ProtectionSpace) {
        let target = space.target
        let now = cost(of: space)
        targetBytes[target, default: 0] += now - (spaceBytes[space] ?? 0)
        spaceBytes[space] = now == 0 ? nil : now
        if targetBytes[target] == 0 { targetBytes[target] = nil }
    }

    /// Bytes of learned state kept for `target` now.
    func learnedBytes(for target: AuthTarget) -> Int { locked { targetBytes[target] ?? 0 } }

    static let maxSpacesPerTarget = 32

    public func forget(_ space: ProtectionSpace) {
        locked { drop(space) }
    }

    // MARK: Standing and lock-out

    /// The credential was accepted on `resource` (any answer but the challenge status).
    public func accept(_ space: ProtectionSpace, on resource: ResourceKey) {
        locked {
            // Accepted, and on this same resource last time: nothing changes but the touch, made
            // in place (no copy of the list). A preemptive answer accepted again on the resource
            // its plan's candidate saw last does not come here (`AcceptanceMemo`).
            if let index = standings.index(forKey: space), case .accepted(let resources) = standings.values[index].standing,
               resources.last == resource {
                touches &+= 1
                standings.values[index].touched = touches
                return
            }
            let standing = standings[space]?.standing ?? .unproven(refusedOn: [])
            setStanding(standing.accepting(resource), of: space)
        }
    }

    /// A refusal of the credential on `resource` (already counted `max_failures` times within
    /// its request): what it means, decided under the lock so that concurrent refusals and
    /// successes see each other. A space locked out forgets what was learned of it.
    public func refuse(_ space: ProtectionSpace, on resource: ResourceKey, credentialName: String, at now: Date) -> RefusalVerdict {
        locked {
            let standing = standings[space]?.standing ?? .unproven(refusedOn: [])
            let (verdict, next) = standing.refusing(resource, space: space, credentialName: credentialName, at: now)
            setStanding(next, of: space)
            if case .lockedOut = next { drop(space) }
            return verdict
        }
    }

    public func standing(of space: ProtectionSpace) -> SpaceStanding? {
        locked { standings[space]?.standing }
    }

    public func lockOut(of space: ProtectionSpace) -> LockOut? {
        locked {
            guard case .lockedOut(let lockOut)? = standings[space]?.standing else { return nil }
            return lockOut
        }
    }

    public func isLockedOut(_ space: ProtectionSpace) -> Bool { lockOut(of: space) != nil }

    /// Every locked-out space, oldest first (for `/status`).
    public func lockOuts() -> [LockOut] {
        locked {
            standings.values.compactMap { entry -> LockOut? in
                guard case .lockedOut(let lockOut) = entry.standing else { return nil }
                return lockOut
            }.sorted { $0.since < $1.since }
        }
    }

    /// A target keeps the standing of at most `maxStandingsPerTarget` spaces (a server naming a
    /// new realm in every 401 must not grow the store): the least recently touched goes.
    private func setStanding(_ standing: SpaceStanding, of space: ProtectionSpace) {
        touches &+= 1
        if standings[space] == nil {
            let sameTarget = standings.filter { $0.key.target == space.target }
            if sameTarget.count >= Self.maxStandingsPerTarget, let oldest = sameTarget.min(by: { $0.value.touched < $1.value.touched }) {
                standings[oldest.key] = nil
                moveGeneration()   // a lock-out may have gone with it
            }
        }
        if standing.isLockedOut || standings[space]?.standing.isLockedOut == true { moveGeneration() }
        standings[space] = (standing, touches)
    }

    /// Where the learned state stands now, for `PreemptivePlans`.
    public var learnedGeneration: UInt64 { generation.load(ordering: .acquiring) }

    private func moveGeneration() { generation.wrappingAdd(1, ordering: .releasing) }

    static let maxStandingsPerTarget = 64

    public func entry(for space: ProtectionSpace) -> LearnedSpace? {
        locked { entries[space] }
    }

    /// Entries for one host and port, most recently learned first.
    public func entries(for target: AuthTarget) -> [LearnedSpace] {
        locked {
            let matching = entries.values.filter { $0.space.target == target }
            return matching.count < 2 ? matching : matching.sorted { $0.learnedAt > $1.learnedAt }
        }
    }

    // MARK: Digest sessions
    //
    // A Digest session (nonce, opaque, count) is lent to one exchange at a time and comes back
    // when that exchange has its answer. So each nonce's counts reach the server in the order
    // they were given, which servers that demand the exact next count (Apache with
    // AuthDigestNcCheck) require; concurrent exchanges find no idle session, go without a
    // preemptive answer, and the challenge they get starts a session of its own.

    /// An idle session of the space, now lent to the caller; nil when all are in use.
    public func leaseDigestSession(_ space: ProtectionSpace) -> DigestSession? {
        locked { popIdleSession(space) }
    }

    private func popIdleSession(_ space: ProtectionSpace) -> DigestSession? {
        popIdleSession(digest[space], of: space)
    }

    private func popIdleSession(_ state: DigestSpaceState?, of space: ProtectionSpace) -> DigestSession? {
        guard let session = state?.idle.popLast() else { return nil }
        changed(space, by: -Self.cost(session))   // counted again when it comes back
        return session
    }

    /// The space's Digest state, made when first needed.
    private func digestState(_ space: ProtectionSpace) -> DigestSpaceState {
        if let state = digest[space] { return state }
        let state = DigestSpaceState()
        digest[space] = state
        return state
    }

    /// Gives back a session after a successful exchange (its `nextnonce` already adopted).
    /// One idle session per nonce is enough: their counts are shared anyway.
    public func returnDigestSession(_ session: DigestSession, to space: ProtectionSpace) {
        locked {
            // Another session may have counted this nonce further; what is saved must not repeat it.
            let state = digestState(space)
            var session = session
            // Counts reserved for it and not used are taken back when no one counted past them.
            if session.hasReservedCount, state.counts[session.nonce] == session.reservedCount {
                state.counts[session.nonce] = session.nonceCount
            }
            session.reservedCount = 0
            session.nonceCount = max(session.nonceCount, state.counts[session.nonce] ?? 0)
            // The bytes this changes, counted as they go (the usual return replaces a session of
            // the same nonce by one of the same size: a delta of zero, nothing recounted).
            let sessionCost = Self.cost(session)
            var delta = sessionCost
            state.idle.removeAll { old in
                guard old.nonce == session.nonce else { return false }
                delta -= Self.cost(old)
                return true
            }
            state.idle.append(session)
            if state.idle.count > Self.maxIdleDigestSessions {
                for old in state.idle.prefix(state.idle.count - Self.maxIdleDigestSessions) { delta -= Self.cost(old) }
                state.idle.removeFirst(state.idle.count - Self.maxIdleDigestSessions)
            }
            // The learned entry's session is what `state_dir` keeps: only a `permanent` one needs
            // the latest count (the others keep the session they were learned with, counted).
            if let index = entries.index(forKey: space), entries.values[index].persistence == .permanent {
                delta += sessionCost - (entries.values[index].digest.map(Self.cost) ?? 0)
                entries.values[index].digest = session
            }
            changed(space, by: delta)
        }
    }

    /// A session moved on from `nonce` (`nextnonce`): its count goes unless an idle session
    /// still holds it. Counts are kept for live sessions, not per nonce a server ever sent.
    public func retireNonce(_ nonce: String, in space: ProtectionSpace) {
        locked {
            guard let state = digest[space], state.counts[nonce] != nil, !state.idle.contains(where: { $0.nonce == nonce }) else { return }
            state.counts[nonce] = nil
            changed(space)
        }
    }

    /// Takes the next count of the session's nonce, shared by every session and worker that
    /// holds that nonce (servers may hand one nonce to parallel connections, and a repeated
    /// count is a replay to them), and sets the session just below it for its next answer.
    public func reserveNonceCount(_ session: inout DigestSession, in space: ProtectionSpace) {
        locked { reserveCount(&session, in: digestState(space), of: space) }
    }

    /// `leaseDigestSession` and `reserveNonceCount` under one lock: a preemptive Digest answer.
    public func leaseCountedDigestSession(_ space: ProtectionSpace) -> DigestSession? {
        locked {
            guard let state = digest[space], var session = popIdleSession(state, of: space) else { return nil }
            reserveCount(&session, in: state, of: space)
            return session
        }
    }

    /// The next `count` counts of the session's nonce, for it alone: a shelved session
    /// (`DigestSessionShelf`) takes them one per answer without coming back here.
    func reserveNonceCounts(_ session: inout DigestSession, _ count: UInt32, in space: ProtectionSpace) {
        locked { reserveCount(&session, count, in: digestState(space), of: space) }
    }

    var countsEpoch: UInt64 { countsMoved.load(ordering: .acquiring) }

    private func reserveCount(_ session: inout DigestSession, _ count: UInt32 = 1, in state: DigestSpaceState, of space: ProtectionSpace) {
        let nonce = session.nonce
        let counted = state.counts[nonce]
        if let counted, counted > session.nonceCount { countsMoved.wrappingAdd(1, ordering: .releasing) }
        let next = max(session.nonceCount, counted ?? 0) &+ 1
        if counted == nil, state.counts.count >= Self.maxCountedNonces {
            // Keep the counts of idle sessions; a nonce in flight past this many is long gone.
            let idle = Set(state.idle.map(\.nonce))
            state.counts.keepOnly { idle.contains($0) }
        }
        state.counts[nonce] = next &+ (count &- 1)
        if counted == nil { changed(space) }
        session.nonceCount = next &- 1
        session.reservedCount = next &+ (count &- 1)
        session.reservedEpoch = countsEpoch
    }

    static let maxIdleDigestSessions = 256
    /// Nonces counted per space: one per live session; past this, the counts of nonces no idle
    /// session holds go (a nonce in flight that long ago is gone).
    static let maxCountedNonces = 64

    /// The entries with persistence "permanent", for `state_dir`.
    public func permanentEntries() -> [LearnedSpace] {
        locked { entries.values.filter { $0.persistence == .permanent } }
    }

    /// Takes back what `permanentEntries` gave before a restart; entries already learned in
    /// this process win.
    public func restore(_ saved: [LearnedSpace]) {
        locked {
            for entry in saved where entry.persistence == .permanent && entries[entry.space] == nil {
                entries[entry.space] = entry
                moveGeneration()
                if let session = entry.digest {
                    let state = DigestSpaceState()
                    state.idle = [session]
                    state.counts = NonceCounts(session.nonce, count: session.nonceCount)
                    digest[entry.space] = state
                }
                changed(entry.space)
            }
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.withLock { _ in body() }
    }
}

/// One protection space's Digest sessions waiting to be leased and the highest count given out
/// per nonce; changed only under the store's lock.
final class DigestSpaceState {
    var idle: [DigestSession] = []
    var counts = NonceCounts()
}
