/// Upstream connections that belong to one client connection because the client authenticated
/// them itself with a connection-bound scheme (`Authorization: NTLM` / `Negotiate`): IIS
/// authenticates the connection, not the request, so such a connection would serve whoever
/// used it next as that client's user. It is parked here between that client's requests
/// (the three NTLM legs and what follows), watched for the server closing it, and closed with
/// the client connection; it never enters the shared pool.
final class ClientBoundUpstreams: IdleUpstreamHolder {
    private var parked: [(key: UpstreamKey, connection: UpstreamConnection)] = []
    /// A client connection talks to a few origins at most this way; without a bound one
    /// client could hold any number of upstream descriptors open.
    static let maxPerClient = 4
    private let idleReadBuffers: IdleReadBufferTrimmer

    init(idleReadBuffers: IdleReadBufferTrimmer) {
        self.idleReadBuffers = idleReadBuffers
    }

    var isEmpty: Bool { parked.isEmpty }

    func holds(_ key: UpstreamKey) -> Bool { parked.contains { $0.key == key } }

    /// The connection parked for `key`, now the caller's; nil when none is left usable.
    func take(_ key: UpstreamKey) -> UpstreamConnection? {
        guard let index = parked.firstIndex(where: { $0.key == key }) else { return nil }
        let connection = parked.remove(at: index).connection
        guard connection.stream.isOpen, connection.stream.inputLength == 0 else {
            connection.close()
            return nil
        }
        connection.stream.delegate = nil
        connection.reused = true
        return connection
    }

    /// Keeps `connection` for this client's next request to `key`; the oldest goes when full.
    func park(_ connection: UpstreamConnection, for key: UpstreamKey, idleTimeout: Double) {
        guard connection.stream.isOpen, connection.stream.inputLength == 0 else {
            connection.close()
            return
        }
        if let index = parked.firstIndex(where: { $0.key == key }) {
            parked.remove(at: index).connection.close()
        } else if parked.count >= Self.maxPerClient {
            parked.removeFirst().connection.close()
        }
        watchWhileIdle(connection, idleTimeout: idleTimeout, trimmer: idleReadBuffers)
        parked.append((key, connection))
    }

    func closeAll() {
        let all = parked
        parked.removeAll()
        for entry in all { entry.connection.close() }
    }

    func drop(_ stream: Stream) {
        if let index = parked.firstIndex(where: { $0.connection.stream === stream }) {
            parked.remove(at: index).connection.close()
            return
        }
        stream.close()
    }
}
