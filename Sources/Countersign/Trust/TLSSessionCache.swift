import COpenSSL
import CountersignSupport

/// Client TLS sessions keyed by "host:port", so a new connection to the same upstream
/// resumes instead of doing a full handshake. Holds one reference to each `SSL_SESSION*`.
///
/// The cache keeps copies, never a session a connection is using: OpenSSL marks a connection's
/// session not resumable when the connection fails, and an origin ending an idle connection with
/// no close_notify (nginx at its keepalive timeout) fails it on the read. RFC 5246 7.2.1 lets such a
/// session be resumed; had the cache kept that very object, every later connection to the host
/// would do a full handshake.
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

    /// Keeps a copy of `session` as the latest one for `key` (the caller keeps its reference).
    func store(copyOf original: OpaquePointer, for key: String) {
        guard let session = SSL_SESSION_dup(original) else { return }
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

    /// A copy of the cached session for `key`, which the caller must release.
    func session(for key: String) -> OpaquePointer? {
        entries.withLock { entries in
            entries.sessions[key].flatMap { SSL_SESSION_dup($0) }
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
