import CountersignHTTP

/// Identifies upstream connections that may serve each other's requests: the same
/// endpoint, reached with the same TLS policy and identity (a compiled context).
struct UpstreamKey: Hashable, CustomStringConvertible {
    var host: String
    var port: UInt16
    /// The TLS context's identity; nil for plain TCP.
    var tls: ObjectIdentifier?
    /// Whom a connection-bound scheme (NTLM) authenticated this connection as.
    var binding: ConnectionBinding? = nil

    func bound(to binding: ConnectionBinding) -> UpstreamKey {
        var key = self
        key.binding = binding
        return key
    }

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
