import CountersignHTTP
import CountersignInterception
import CountersignTrust

/// An origin that chose `h2`: the connection hands its TLS stream to an `H2UpstreamSession` and
/// becomes the session's first lane; later exchanges get lanes of that session, which look like
/// HTTP/1.1 connections to the exchange and the pool.
extension UpstreamConnection {
    /// When the origin chose `h2`: an `H2UpstreamSession` takes the TLS stream (and the
    /// descriptor's count) over, and `stream` becomes the near end of its first lane, read and
    /// written as HTTP/1.1 by the exchange and the pool. False (and failed) when the pair could
    /// not be made; true when it was, or when the origin speaks HTTP/1.1.
    func adoptHTTP2IfNegotiated() -> Bool {
        guard tls != nil, let ssl = stream.ssl, ALPNSelection.negotiated(ssl) == .h2 else { return true }
        guard let context = workerContext,
              let (session, lane, near) = H2UpstreamSession.adopt(stream, key: key, limits: context.config.limits, base: base, ended: { [weak context] session in
                  context?.h2Upstreams.remove(session)
                  context?.releaseDescriptorsLater(1)
              }) else {
            fail(ProxyError(.proxyInternalError, details: "cannot start HTTP/2 to \(key)"))
            return false
        }
        session.servedLeaf = servedLeaf
        context.h2Upstreams.add(session)
        becomeLane(lane, of: session, near: near, context: context)
        return true
    }

    /// Another exchange's connection on `session` (which had room): ready at once, no socket of its own.
    static func lane(on session: H2UpstreamSession, tls: UpstreamTLSContext?, context: WorkerContext) -> UpstreamConnection? {
        guard let (lane, near) = session.makeLane() else { return nil }
        let limits = context.config.limits
        let plan = UpstreamDial.Plan(origin: Authority(host: session.key.host, port: session.key.port), originSecurity: .tls,
                                     connectTimeout: limits.connectTimeout, headerTimeout: limits.headerTimeout)
        let connection = UpstreamConnection(key: session.key, stream: near, tls: tls, serverName: session.key.host, dial: UpstreamDial(plan),
                                            parent: nil, maxHeaderBytes: limits.maxHeaderBytes, base: context.base)
        connection.becomeLane(lane, of: session, near: near, context: context)
        return connection
    }
}
