import CEventSSL

/// Client TLS sessions keyed by "host:port", so a new connection to the same upstream
/// resumes instead of doing a full handshake. Holds one reference to each `SSL_SESSION*`.
final class TLSSessionCache: @unchecked Sendable {
    private let lock = Lock()
    private var sessions: [String: OpaquePointer] = [:]
    private var insertionOrder: [String] = []
    let capacity: Int

    init(capacity: Int = 256) {
        self.capacity = capacity
    }

    /// Keeps `session` (taking over the caller's reference) as the latest one for `key`.
    func store(_ session: OpaquePointer, for key: String) {
        let evicted: [OpaquePointer] = lock.withLock {
            var evicted: [OpaquePointer] = []
            if let previous = sessions.updateValue(session, forKey: key) {
                evicted.append(previous)
                insertionOrder.removeAll { $0 == key }
            }
            insertionOrder.append(key)
            while insertionOrder.count > capacity {
                let oldest = insertionOrder.removeFirst()
                if let old = sessions.removeValue(forKey: oldest) { evicted.append(old) }
            }
            return evicted
        }
        evicted.forEach { SSL_SESSION_free($0) }
    }

    /// The cached session for `key` with an extra reference the caller must release.
    func session(for key: String) -> OpaquePointer? {
        lock.withLock {
            guard let session = sessions[key] else { return nil }
            SSL_SESSION_up_ref(session)
            return session
        }
    }

    func remove(_ key: String) {
        let removed = lock.withLock { () -> OpaquePointer? in
            insertionOrder.removeAll { $0 == key }
            return sessions.removeValue(forKey: key)
        }
        removed.map { SSL_SESSION_free($0) }
    }

    var count: Int { lock.withLock { sessions.count } }

    deinit {
        sessions.values.forEach { SSL_SESSION_free($0) }
    }
}
