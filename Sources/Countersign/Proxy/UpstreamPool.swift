import CLibevent

/// Idle keep-alive upstream connections of one worker. An idle connection is watched for
/// the server closing it, and dropped after `idle_timeout`. Buckets are classes so taking
/// and returning a connection mutates in place (no array copy on the hot path).
final class UpstreamPool: IdleUpstreamHolder {
    private final class Bucket {
        var connections: [UpstreamConnection] = []
    }

    private var buckets: [UpstreamKey: Bucket] = [:]
    /// Which bucket an idle connection's stream is in, for when the server closes it.
    private var keyOfStream: [ObjectIdentifier: UpstreamKey] = [:]
    /// As deep as the concurrency one host sees: an HTTP/2 client's 100 streams to an
    /// HTTP/1.1 origin need 100 upstream connections at once, and with 64 kept the rest were
    /// closed after each burst and dialled again (a TLS handshake each). Idle connections cost
    /// little (their read buffers are trimmed) and give up their descriptors when the worker
    /// runs short (`evictOneForItsDescriptor`).
    private let maxIdlePerKey = 256
    /// Counts connections parked, to know which one has waited longest.
    private var parkings = 0
    var idleTimeout: Double = 60
    /// Trims the read buffers of parked connections (set by the worker).
    var idleReadBuffers: IdleReadBufferTrimmer?

    func take(_ key: UpstreamKey) -> UpstreamConnection? {
        guard let bucket = buckets[key] else { return nil }
        while let connection = bucket.connections.popLast() {
            keyOfStream.removeValue(forKey: ObjectIdentifier(connection.stream))
            if connection.stream.isOpen && connection.stream.inputLength == 0 {
                connection.stream.delegate = nil
                connection.reused = true
                return connection
            }
            connection.close()
        }
        return nil
    }

    func put(_ connection: UpstreamConnection) {
        // A client's own authentication never serves another client (SPEC "Proxy behaviour").
        guard connection.key.binding != .client, connection.stream.isOpen, connection.stream.inputLength == 0 else {
            connection.close()
            return
        }
        let bucket = buckets[connection.key] ?? {
            let fresh = Bucket()
            buckets[connection.key] = fresh
            return fresh
        }()
        guard bucket.connections.count < maxIdlePerKey else {
            connection.close()
            return
        }
        watchWhileIdle(connection, idleTimeout: idleTimeout, trimmer: idleReadBuffers)
        parkings += 1
        connection.parkedOrder = parkings
        bucket.connections.append(connection)
        keyOfStream[ObjectIdentifier(connection.stream)] = connection.key
    }

    /// Closes the connection parked longest that holds a descriptor (an HTTP/2 lane holds
    /// none), its descriptor handed over to the caller (see `UpstreamConnection.open`); false
    /// when no such connection is parked.
    func evictOneForItsDescriptor() -> Bool {
        let candidates = buckets.values.compactMap { bucket in bucket.connections.first(where: \.holdsDescriptor).map { (bucket, $0) } }
        guard let (bucket, connection) = candidates.min(by: { $0.1.parkedOrder < $1.1.parkedOrder }),
              let index = bucket.connections.firstIndex(where: { $0 === connection }) else { return false }
        bucket.connections.remove(at: index)
        keyOfStream.removeValue(forKey: ObjectIdentifier(connection.stream))
        connection.closeHandingOverDescriptor()
        return true
    }

    func closeAll() {
        for bucket in buckets.values { bucket.connections.forEach { $0.close() } }
        buckets.removeAll()
        keyOfStream.removeAll()
    }

    func drop(_ stream: Stream) {
        if let key = keyOfStream.removeValue(forKey: ObjectIdentifier(stream)), let bucket = buckets[key],
           let index = bucket.connections.firstIndex(where: { $0.stream === stream }) {
            bucket.connections.remove(at: index).close()
            return
        }
        stream.close()
    }
}
