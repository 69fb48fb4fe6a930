import CountersignConfig
import CountersignHTTP
import CountersignTrust

/// Where one request goes: the endpoint, whether over TLS and with which compiled policy,
/// and the `Host` field the upstream should see. Immutable, and a class: a route decided once
/// is handed on (route, exchange, memo) as one reference, where a value of five counted fields
/// cost five retains and releases at every hand-over.
final class UpstreamTarget {
    let host: String
    let port: UInt16
    let tls: UpstreamTLSContext?
    let hostField: String
    /// What the snapshot compiled for the `hosts` entry that governs this upstream, if any.
    let plan: HostPlan?
    /// The configured parent proxy, if any.
    let parentHop: ParentHop?

    init(authority: Authority, tls: UpstreamTLSContext?, plan: HostPlan?, parent: ParentHop?, hostField: String? = nil) {
        self.plan = plan
        self.parentHop = parent
        host = authority.host
        port = authority.port
        self.tls = tls
        self.hostField = hostField ?? authority.hostField(defaultPort: tls == nil ? 80 : 443)
    }

    /// The `hosts` entry (trust, identity, auth rules), if any.
    var entry: HostConfig? { plan?.config }
    /// The `/status` row this upstream counts in: read through the plan, not `entry`, which
    /// copies the whole entry for one string.
    var row: String { plan?.config.pattern ?? Observations.otherRow }

    /// A plain request through the parent goes to it in absolute form, on a connection to it.
    var parent: ParentHop? { tls == nil ? parentHop : nil }

    /// What the pool key is made of (`RecentUpstreamKey`): the parent's endpoint or the
    /// origin's. Plain requests through a parent share connections to the parent; TLS ones are
    /// tunnelled (CONNECT) to their origin, one connection per origin.
    var keyEndpoint: (host: String, port: UInt16, tls: ObjectIdentifier?) {
        if let parent { return (parent.host, parent.port, parent.tls.map(ObjectIdentifier.init)) }
        return (host, port, tls.map(ObjectIdentifier.init))
    }
    var scheme: String { tls == nil ? "http" : "https" }
}

extension UpstreamKey {
    /// How errors name it, spelled only when an error is made.
    var label: UpstreamLabel { UpstreamLabel(secure: tls != nil, authority: Authority(host: host, port: port)) }
}
