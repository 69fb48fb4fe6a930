import CountersignHTTP

/// Identifies upstream connections that may serve each other's requests: the same
/// endpoint, reached with the same TLS policy and identity (a compiled context).
struct UpstreamKey: Hashable, CustomStringConvertible {
    /// The key's fields, made once: a request copies its key several times (the worker's
    /// recent key, the exchange, the connection), and a copy is then one retain rather than
    /// a copy of each string; the same key again is known by identity, with no compare.
    private final class Parts: Sendable {
        let host: String
        let port: UInt16
        let tls: ObjectIdentifier?
        let binding: ConnectionBinding?
        /// Hashed once, when the key is made: the pool looks a key up twice per request (take,
        /// then put back), and hashing the host name each time cost ~900 instructions.
        let hashed: Int

        init(host: String, port: UInt16, tls: ObjectIdentifier?, binding: ConnectionBinding?) {
            self.host = host
            self.port = port
            self.tls = tls
            self.binding = binding
            var hasher = Hasher()
            hasher.combine(host)
            hasher.combine(port)
            hasher.combine(tls)
            hasher.combine(binding)
            hashed = hasher.finalize()
        }
    }

    private let parts: Parts

    var host: String { parts.host }
    var port: UInt16 { parts.port }
    /// The TLS context's identity; nil for plain TCP.
    var tls: ObjectIdentifier? { parts.tls }
    /// Whom a connection-bound scheme (NTLM) authenticated this connection as.
    var binding: ConnectionBinding? { parts.binding }

    init(host: String, port: UInt16, tls: ObjectIdentifier?, binding: ConnectionBinding? = nil) {
        parts = Parts(host: host, port: port, tls: tls, binding: binding)
    }

    func bound(to binding: ConnectionBinding) -> UpstreamKey {
        UpstreamKey(host: host, port: port, tls: tls, binding: binding)
    }

    static func == (a: UpstreamKey, b: UpstreamKey) -> Bool {
        if a.parts === b.parts { return true }
        let a = a.parts, b = b.parts
        return a.hashed == b.hashed && a.port == b.port && a.tls == b.tls && a.host == b.host && a.binding == b.binding
    }

    func hash(into hasher: inout Hasher) { hasher.combine(parts.hashed) }

    var description: String { "\(tls == nil ? "http" : "https")://\(Authority(host: host, port: port))" }
}

/// Whose a connection is once a connection-bound scheme authenticated it (IIS serves every
/// later request on it as that user).
enum ConnectionBinding: Hashable {
    /// Countersign's own credential, by name within one configuration generation (a reload
    /// may give the name another user): pooled only for exchanges answering with it.
    case credential(String, generation: Int)
    /// The client's own `Authorization: NTLM/Negotiate`: the connection stays with that client
    /// connection (`ClientBoundUpstreams`) and is never pooled.
    case client
}
