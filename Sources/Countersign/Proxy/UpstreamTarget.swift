import CountersignConfig
import CountersignHTTP
import CountersignTrust

/// Where one request goes: the endpoint, whether over TLS and with which compiled policy,
/// and the `Host` field the upstream should see.
struct UpstreamTarget {
    let host: String
    let port: UInt16
    let tls: UpstreamTLSContext?
    let hostField: String
    /// The `hosts` entry that governs this upstream (trust, identity, auth rules), if any.
    let entry: HostConfig?

    init(authority: Authority, tls: UpstreamTLSContext?, entry: HostConfig?, hostField: String? = nil) {
        self.entry = entry
        host = authority.host
        port = authority.port
        self.tls = tls
        self.hostField = hostField ?? authority.hostField(defaultPort: tls == nil ? 80 : 443)
    }

    var key: UpstreamKey { UpstreamKey(host: host, port: port, tls: tls.map(ObjectIdentifier.init)) }
    var scheme: String { tls == nil ? "http" : "https" }
}
