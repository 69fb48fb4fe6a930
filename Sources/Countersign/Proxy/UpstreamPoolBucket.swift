import CountersignSupport

/// The idle connections of one `UpstreamKey` in a worker's pool, and the delegate of their
/// streams while they wait: a connection the server closes is found among its own key's
/// connections, so the pool keeps no map from streams to keys (two hashes per request).
final class UpstreamPoolBucket: IdleUpstreamHolder {
    /// The key every connection here was made for.
    let key: UpstreamKey
    private(set) var connections: [UpstreamConnection] = []

    init(key: UpstreamKey) {
        self.key = key
    }

    var isEmpty: Bool { connections.isEmpty }

    /// The connection parked last that is still usable, now the caller's.
    func take() -> UpstreamConnection? {
        while let connection = connections.popLast() {
            // Asked with no retain around the stream: reading its state lets nothing go.
            if withHeld(connection.stream, { $0.isOpen && $0.inputLength == 0 }) {
                connection.stream.delegate = nil
                connection.reused = true
                return connection
            }
            connection.close()
        }
        return nil
    }

    func park(_ connection: UpstreamConnection, idleTimeout: Double, trimmer: IdleReadBufferTrimmer?) {
        watchWhileIdle(connection, idleTimeout: idleTimeout, trimmer: trimmer)
        connections.append(connection)
    }

    /// The first parked connection that holds a descriptor (an HTTP/2 lane holds none).
    var oldestHoldingDescriptor: UpstreamConnection? { connections.first(where: \.holdsDescriptor) }

    func remove(_ connection: UpstreamConnection) {
        guard let index = connections.firstIndex(where: { $0 === connection }) else { return }
        connections.remove(at: index)
    }

    func closeAll() {
        let all = connections
        connections.removeAll()
        all.forEach { $0.close() }
    }

    func drop(_ stream: Stream) {
        guard let index = connections.firstIndex(where: { $0.stream === stream }) else { return stream.close() }
        connections.remove(at: index).close()
    }
}
