import CountersignConfig
import CountersignHTTP

/// What an intercepted CONNECT fixed for the rest of its connection. A class, so a
/// client connection carries one reference rather than a whole host entry.
final class InterceptedTunnel {
    let authority: Authority
    let host: HostConfig
    var handshakeDone = false
    /// The `Host` values a client spells this authority with (port 443 may be left out);
    /// another spelling of the same authority is parsed.
    private let usualHostFields: (withPort: String, withoutPort: String?)
    /// Where the last request went, in the configuration generation it was resolved in: every
    /// request of a kept-alive tunnel goes to the same upstream until a reload.
    private var lastUpstream: (generation: Int, upstream: UpstreamTarget)?

    init(authority: Authority, host: HostConfig) {
        self.authority = authority
        self.host = host
        usualHostFields = (authority.hostField(defaultPort: 0), authority.port == 443 ? authority.hostField(defaultPort: 443) : nil)
    }

    /// RFC 9110 §7.4: a request inside this tunnel for any other authority is misdirected.
    func accepts(hostField: String?) -> Bool {
        guard let hostField else { return false }
        if hostField == usualHostFields.withPort || hostField == usualHostFields.withoutPort { return true }
        guard let parsed = try? Authority.parse(Substring(hostField), defaultPort: 443) else { return false }
        return parsed == authority
    }

    /// The upstream for requests in this tunnel under `snapshot`: its own entry for this
    /// host, so a reload's new policy applies at once, or the entry the CONNECT found.
    func upstream(in snapshot: ConfigSnapshot) -> UpstreamTarget {
        if let lastUpstream, lastUpstream.generation == snapshot.generation { return lastUpstream.upstream }
        let entry = snapshot.configuration.hosts.lookup(host: authority.host, port: authority.port) ?? host
        let plan = snapshot.plan(for: entry)
        let upstream = UpstreamTarget(authority: authority, tls: snapshot.upstreamTLS(for: plan), plan: plan, parent: snapshot.parent)
        lastUpstream = (snapshot.generation, upstream)
        return upstream
    }
}
