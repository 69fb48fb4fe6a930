import CountersignSupport

/// Idle keep-alive upstream connections of one worker, a bucket per key. An idle connection is
/// watched for the server closing it (by its bucket), and dropped after `idle_timeout`.
/// Buckets are classes so taking and returning a connection mutates in place (no array copy
/// on the hot path), and a connection taken remembers its bucket: the key is hashed once per
/// request, when the connection is taken.
final class UpstreamPool {
    private var buckets: [UpstreamKey: UpstreamPoolBucket] = [:]
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

    /// The bucket last taken from: a keep-alive client asks the same upstream again and
    /// again, and comparing its key (the same strings, known by identity) costs a fraction of
    /// hashing it and probing the dictionary (~250 instructions a request). A bucket rather
    /// than a (key, bucket) pair, since copying the pair out to compare cost ~250 more.
    private var lastTaken: UpstreamPoolBucket?

    func take(_ key: UpstreamKey) -> UpstreamConnection? {
        let bucket: UpstreamPoolBucket
        if let lastTaken, lastTaken.key == key {
            bucket = lastTaken
        } else {
            guard let found = buckets[key] else { return nil }
            lastTaken = found
            bucket = found
        }
        guard let connection = bucket.take() else { return nil }
        connection.poolBucket = bucket
        return connection
    }

    func put(_ connection: UpstreamConnection) {
        // A client's own authentication never serves another client (SPEC "Proxy behaviour").
        // The stream is asked with no retain around it: reading its state lets nothing go.
        guard connection.key.binding != .client, withHeld(connection.stream, { $0.isOpen && $0.inputLength == 0 }) else {
            connection.close()
            return
        }
        let bucket = bucket(for: connection)
        guard bucket.connections.count < maxIdlePerKey else {
            connection.close()
            return
        }
        parkings += 1
        connection.parkedOrder = parkings
        bucket.park(connection, idleTimeout: idleTimeout, trimmer: idleReadBuffers)
    }

    /// The bucket the connection was taken from (a reused connection's key does not change;
    /// buckets stay for the pool's life), else the key's, made when first needed.
    private func bucket(for connection: UpstreamConnection) -> UpstreamPoolBucket {
        if let bucket = connection.poolBucket { return bucket }
        let bucket = buckets[connection.key] ?? {
            let fresh = UpstreamPoolBucket(key: connection.key)
            buckets[connection.key] = fresh
            return fresh
        }()
        connection.poolBucket = bucket
        return bucket
    }

    /// Closes the connection parked longest that holds a descriptor (an HTTP/2 lane holds
    /// none), its descriptor handed over to the caller (see `UpstreamConnection.open`); false
    /// when no such connection is parked.
    func evictOneForItsDescriptor() -> Bool {
        let candidates = buckets.values.compactMap { bucket in bucket.oldestHoldingDescriptor.map { (bucket, $0) } }
        guard let (bucket, connection) = candidates.min(by: { $0.1.parkedOrder < $1.1.parkedOrder }) else { return false }
        bucket.remove(connection)
        connection.closeHandingOverDescriptor()
        return true
    }

    /// Closes every idle connection. The buckets stay: a connection taken from one remembers
    /// it, and one put back later (an exchange that ends while the worker drains) must be in
    /// the bucket the next `closeAll` sees.
    func closeAll() {
        for bucket in buckets.values { bucket.closeAll() }
    }
}
