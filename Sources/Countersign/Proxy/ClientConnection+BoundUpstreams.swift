/// Upstream connections the client authenticated itself (NTLM, Negotiate): kept for its next
/// requests, never pooled, closed with it.
extension ClientConnection {
    func holdsBoundUpstream(for key: UpstreamKey) -> Bool { boundUpstreams?.holds(key) ?? false }

    func takeBoundUpstream(for key: UpstreamKey) -> UpstreamConnection? { boundUpstreams?.take(key) }

    /// Keeps a connection the client authenticated for its next requests; closed with it.
    func keepBoundUpstream(_ connection: UpstreamConnection, for key: UpstreamKey) {
        guard state != .closing, state != .closed else {
            connection.close()
            return
        }
        let holder = boundUpstreams ?? ClientBoundUpstreams(idleReadBuffers: context.idleReadBuffers)
        boundUpstreams = holder
        holder.park(connection, for: key, idleTimeout: context.config.limits.idleTimeout)
    }
}
