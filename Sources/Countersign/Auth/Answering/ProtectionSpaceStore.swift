import Foundation
import CountersignSupport

/// Learned state shared by all workers, behind one lock; the "permanent" entries go to and
/// come back from `state_dir` through `AuthStateFile`.
public final class ProtectionSpaceStore: @unchecked Sendable {
    private let lock = Mutex(())
    private var entries: [ProtectionSpace: LearnedSpace] = [:]
    private var idleDigest: [ProtectionSpace: [DigestSession]] = [:]
    /// The highest count given out per nonce, per space.
    private var digestCounts: [ProtectionSpace: [String: UInt32]] = [:]
    /// Spaces whose credential was rejected `max_failures` times: not answered again until the
    /// configuration reloads (a new store). Only those spaces: a 401 for another realm, or one
    /// passed through unanswered, locks nothing out.
    private var lockedOut: Set<ProtectionSpace> = []

    public init() {}

    public func learn(_ entry: LearnedSpace) {
        guard entry.persistence != .none else { return }
        locked {
            if entries[entry.space] == nil { makeRoom(for: entry.space.target) }
            entries[entry.space] = entry
        }
    }

    /// A host and port keep at most `maxSpacesPerTarget` learned spaces: a server that names a
    /// new realm for each request (and accepts the answer) must not grow this store, or the
    /// preemptive search, without bound. The least recently learned goes.
    private func makeRoom(for target: AuthTarget) {
        let sameTarget = entries.values.filter { $0.space.target == target }
        guard sameTarget.count >= Self.maxSpacesPerTarget,
              let oldest = sameTarget.min(by: { $0.learnedAt < $1.learnedAt })?.space else { return }
        entries[oldest] = nil
        idleDigest[oldest] = nil
        digestCounts[oldest] = nil
    }

    static let maxSpacesPerTarget = 32

    public func forget(_ space: ProtectionSpace) {
        locked {
            entries[space] = nil
            idleDigest[space] = nil
            digestCounts[space] = nil
        }
    }

    // MARK: Lock-out

    /// Stops answering `space` (and forgets what was learned of it); true the first time.
    @discardableResult
    public func lockOut(_ space: ProtectionSpace) -> Bool {
        locked {
            entries[space] = nil
            idleDigest[space] = nil
            digestCounts[space] = nil
            return lockedOut.insert(space).inserted
        }
    }

    public func isLockedOut(_ space: ProtectionSpace) -> Bool {
        locked { !lockedOut.isEmpty && lockedOut.contains(space) }
    }

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
        locked { idleDigest[space]?.popLast() }
    }

    /// Gives back a session after a successful exchange (its `nextnonce` already adopted).
    /// One idle session per nonce is enough: their counts are shared anyway.
    public func returnDigestSession(_ session: DigestSession, to space: ProtectionSpace) {
        locked {
            // Another session may have counted this nonce further; what is saved must not repeat it.
            var session = session
            session.nonceCount = max(session.nonceCount, digestCounts[space]?[session.nonce] ?? 0)
            // Changed in place through the dictionary, in one lookup (a copy taken out would be
            // copied again on its first change: up to maxIdleDigestSessions sessions per answer).
            Self.update(&idleDigest[space, default: []]) { idle in
                idle.removeAll { $0.nonce == session.nonce }
                idle.append(session)
                if idle.count > Self.maxIdleDigestSessions { idle.removeFirst(idle.count - Self.maxIdleDigestSessions) }
            }
            entries[space]?.digest = session
        }
    }

    /// Takes the next count of the session's nonce, shared by every session and worker that
    /// holds that nonce (servers may hand one nonce to parallel connections, and a repeated
    /// count is a replay to them), and sets the session just below it for its next answer.
    public func reserveNonceCount(_ session: inout DigestSession, in space: ProtectionSpace) {
        let nonce = session.nonce
        let known = session.nonceCount
        let next: UInt32 = locked {
            let counted = digestCounts[space]?[nonce]
            let next = max(known, counted ?? 0) &+ 1
            if counted == nil, (digestCounts[space]?.count ?? 0) >= Self.maxCountedNonces {
                // Keep the counts of idle sessions; a nonce in flight past this many is long gone.
                let idle = Set((idleDigest[space] ?? []).map(\.nonce))
                digestCounts[space] = digestCounts[space]?.filter { idle.contains($0.key) }
            }
            // In place: a copy of the counts taken out would be copied whole again here.
            digestCounts[space, default: [:]][nonce] = next
            return next
        }
        session.nonceCount = next &- 1
    }

    private static func update<Value>(_ value: inout Value, _ body: (inout Value) -> Void) { body(&value) }

    static let maxIdleDigestSessions = 256
    static let maxCountedNonces = 1024

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
                if let session = entry.digest {
                    idleDigest[entry.space] = [session]
                    digestCounts[entry.space] = [session.nonce: session.nonceCount]
                }
            }
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.withLock { _ in body() }
    }
}
