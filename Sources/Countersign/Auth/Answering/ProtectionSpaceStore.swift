import Foundation

/// Learned state shared by all workers, behind one lock. Exports and imports the entries with
/// persistence "permanent" as JSON; the JSON never contains a secret.
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

    /// JSON of the "permanent" entries, for `state_dir`.
    public func exportPermanentState() throws -> Data {
        let permanent = locked { entries.values.filter { $0.persistence == .permanent } }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(PersistedState(version: 1, spaces: permanent.sorted { $0.learnedAt < $1.learnedAt }))
    }

    /// Loads what `exportPermanentState` wrote; entries already learned in this process win.
    public func importPermanentState(_ data: Data) throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let state: PersistedState
        do {
            state = try decoder.decode(PersistedState.self, from: data)
        } catch {
            throw AuthError("the saved authentication state is not readable (\(error)); delete it to start afresh")
        }
        guard state.version == 1 else {
            throw AuthError("the saved authentication state has version \(state.version); this build reads version 1")
        }
        locked {
            for entry in state.spaces where entry.persistence == .permanent && entries[entry.space] == nil {
                entries[entry.space] = entry
            }
        }
    }

    private struct PersistedState: Codable {
        var version: Int
        var spaces: [LearnedSpace]
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
