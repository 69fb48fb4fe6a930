import CountersignHTTP

/// Identifies upstream connections that may serve each other's requests: the same
/// endpoint, reached with the same TLS policy and identity (a compiled context).
struct UpstreamKey: Hashable, CustomStringConvertible {
    let host: String
    let port: UInt16
    /// The TLS context's identity; nil for plain TCP.
    let tls: ObjectIdentifier?
    /// Whom a connection-bound scheme (NTLM) authenticated this connection as.
    let binding: ConnectionBinding?
    /// Hashed once, when the key is made: the pool looks a key up twice per request (take,
    /// then put back), and hashing the host name each time cost ~900 instructions.
    private let hashed: Int

    init(host: String, port: UInt16, tls: ObjectIdentifier?, binding: ConnectionBinding? = nil) {
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

    func bound(to binding: ConnectionBinding) -> UpstreamKey {
        UpstreamKey(host: host, port: port, tls: tls, binding: binding)
    }

    static func == (a: UpstreamKey, b: UpstreamKey) -> Bool {
        a.hashed == b.hashed && a.port == b.port && a.tls == b.tls && a.host == b.host && a.binding == b.binding
    }

    func hash(into hasher: inout Hasher) { hasher.combine(hashed) }

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
