/// A worker's HTTP/2 upstream connections that have room for another exchange, by key (host,
/// port, TLS policy and identity): a request that finds no idle connection in the pool shares
/// one of these before it dials a new one.
final class H2UpstreamSessions {
    private var byKey: [UpstreamKey: [H2UpstreamSession]] = [:]

    func add(_ session: H2UpstreamSession) {
        byKey[session.key, default: []].append(session)
    }

    func remove(_ session: H2UpstreamSession) {
        byKey[session.key]?.removeAll { $0 === session }
        if byKey[session.key]?.isEmpty == true { byKey[session.key] = nil }
    }

    /// A session for `key` that can take another lane.
    func withRoom(for key: UpstreamKey) -> H2UpstreamSession? {
        byKey[key]?.first { $0.hasRoom }
    }

    func closeAll() {
        for session in byKey.values.flatMap({ $0 }) { session.close() }
        byKey.removeAll()
    }
}
