/// The upstream key of a worker's last forwarded request, given again to the next request for
/// the same upstream (a keep-alive client usually asks one host again and again): making a
/// key hashes its host name, ~300 instructions per request. A class of its own, so changing it
/// does not retain the context.
final class RecentUpstreamKey {
    private var last: UpstreamKey?
    /// The target `last` was made for: the same one again (a connection's `RouteMemo` hands it
    /// on) is known by identity, with no compare of the host. Held, so that its address is
    /// never another target's.
    private var lastTarget: UpstreamTarget?

    func key(for target: UpstreamTarget) -> UpstreamKey {
        if let last, target === lastTarget { return last }
        let fresh = target.keyEndpoint
        lastTarget = target
        if let last, last.binding == nil, last.port == fresh.port, last.tls == fresh.tls, last.host == fresh.host { return last }
        let key = UpstreamKey(host: fresh.host, port: fresh.port, tls: fresh.tls)
        last = key
        return key
    }
}
