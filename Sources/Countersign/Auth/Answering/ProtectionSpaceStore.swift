import Foundation

/// Learned state shared by all workers, behind one lock; the "permanent" entries go to and
/// come back from `state_dir` through `AuthStateFile`.
public final class ProtectionSpaceStore: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [ProtectionSpace: LearnedSpace] = [:]

    public init() {}

    public func learn(_ entry: LearnedSpace) {
        guard entry.persistence != .none else { return }
        locked {
            var entry = entry
            // Exchanges finish out of order: never let one that counted earlier wind a shared
            // nonce's count back, or the next answer would repeat a count (a replay to the server).
            if let stored = entries[entry.space]?.digest, var learned = entry.digest,
               stored.nonce == learned.nonce, stored.nonceCount > learned.nonceCount {
                learned.nonceCount = stored.nonceCount
                entry.digest = learned
            }
            entries[entry.space] = entry
        }
    }

    public func forget(_ space: ProtectionSpace) {
        locked { entries[space] = nil }
    }

    /// Forgets everything, as a configuration reload or a changed credential requires.
    public func reset() {
        locked { entries.removeAll() }
    }

    public func entry(for space: ProtectionSpace) -> LearnedSpace? {
        locked { entries[space] }
    }

    /// Entries for one host and port, most recently learned first.
    public func entries(for target: AuthTarget) -> [LearnedSpace] {
        locked { entries.values.filter { $0.space.target == target }.sorted { $0.learnedAt > $1.learnedAt } }
    }

    /// Runs `body` on the stored Digest session of a space under the lock, so that two workers
    /// answering preemptively never send the same nonce count. Returns nil when none is stored.
    public func withDigestSession<Result>(_ space: ProtectionSpace, _ body: (inout DigestSession) throws -> Result) rethrows -> Result? {
        lock.lock()
        defer { lock.unlock() }
        guard var entry = entries[space], var session = entry.digest else { return nil }
        let result = try body(&session)
        entry.digest = session
        entries[space] = entry
        return result
    }

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
            }
        }
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
