import CountersignConfig
import CountersignHTTP

/// What an intercepted CONNECT fixed for the rest of its connection. A class, so a
/// client connection carries one reference rather than a whole host entry.
final class InterceptedTunnel {
    let authority: Authority
    let host: HostConfig
    var handshakeDone = false
    /// The `Host` values a client spells this authority with (port 443 may be left out), as
    /// bytes: a request's value is compared where it is stored, with no string made of it (that
    /// and the lookup by a name given as text cost ~600 instructions a request). Another
    /// spelling of the same authority is parsed.
    private let usualHostFields: (withPort: [UInt8], withoutPort: [UInt8]?)
    /// Where the last request went, in the configuration generation it was resolved in: every
    /// request of a kept-alive tunnel goes to the same upstream until a reload.
    private var lastUpstream: (generation: Int, upstream: UpstreamTarget)?

    init(authority: Authority, host: HostConfig) {
        self.authority = authority
        self.host = host
        usualHostFields = (Array(authority.hostField(defaultPort: 0).utf8),
                           authority.port == 443 ? Array(authority.hostField(defaultPort: 443).utf8) : nil)
    }

    /// RFC 9110 §7.4: a request inside this tunnel for any other authority is misdirected.
    /// `headers` are the request's; their first `Host` field names the authority.
    func accepts(_ headers: HeaderFields) -> Bool {
        if headers.firstValue(.host, equals: usualHostFields.withPort) { return true }
        if let withoutPort = usualHostFields.withoutPort, headers.firstValue(.host, equals: withoutPort) { return true }
        return accepts(hostField: headers[.host])
    }

    /// A `Host` value spelled other than usually: the same authority, parsed, is accepted too.
    private func accepts(hostField: String?) -> Bool {
        guard let hostField else { return false }
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
