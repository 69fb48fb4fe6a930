import COpenSSL
import CountersignSupport

/// Client TLS sessions keyed by "host:port", so a new connection to the same upstream
/// resumes instead of doing a full handshake. Holds one reference to each `SSL_SESSION*`.
final class TLSSessionCache: @unchecked Sendable {
    private struct Entries {
        var sessions: [String: OpaquePointer] = [:]
        var insertionOrder: [String] = []
    }
    private let entries = Mutex(Entries())
    let capacity: Int

    init(capacity: Int = 256) {
        self.capacity = capacity
    }

    /// Keeps `session` (taking over the caller's reference) as the latest one for `key`.
    func store(_ session: OpaquePointer, for key: String) {
        let evicted: [OpaquePointer] = entries.withLock { entries in
            var evicted: [OpaquePointer] = []
            if let previous = entries.sessions.updateValue(session, forKey: key) {
                evicted.append(previous)
                entries.insertionOrder.removeAll { $0 == key }
            }
            entries.insertionOrder.append(key)
            while entries.insertionOrder.count > capacity {
                let oldest = entries.insertionOrder.removeFirst()
                if let old = entries.sessions.removeValue(forKey: oldest) { evicted.append(old) }
            }
            return evicted
        }
        evicted.forEach { SSL_SESSION_free($0) }
    }

    /// The cached session for `key` with an extra reference the caller must release.
    func session(for key: String) -> OpaquePointer? {
        entries.withLock { entries in
            guard let session = entries.sessions[key] else { return nil }
            SSL_SESSION_up_ref(session)
            return session
        }
    }

    func remove(_ key: String) {
        let removed = entries.withLock { entries -> OpaquePointer? in
            entries.insertionOrder.removeAll { $0 == key }
            return entries.sessions.removeValue(forKey: key)
        }
        removed.map { SSL_SESSION_free($0) }
    }

    var count: Int { entries.withLock { $0.sessions.count } }

    deinit {
        entries.withLock { $0.sessions }.values.forEach { SSL_SESSION_free($0) }
    }
}
