import CountersignConfig
import CountersignHTTP
import CountersignSupport

/// Sharing an HTTP/2 upstream connection: an exchange that found no idle connection takes a
/// lane of one with room, unless its credentials authenticate connections (NTLM, Negotiate,
/// or the client's own), which are never multiplexed across exchanges. A request asking to
/// upgrade (WebSocket) needs HTTP/1.1 end to end: it takes no HTTP/2 connection.
extension ForwardExchange {
    /// An idle pooled connection for this request.
    func takePooled() -> UpstreamConnection? {
        // The pool is a `let` of the worker's context, which this exchange holds.
        guard let pooled = withHeld(context.pool, { $0.take(key) }) else { return nil }
        guard machine.request.wantsUpgrade, pooled.isHTTP2 else { return pooled }
        context.pool.put(pooled)
        return nil
    }

    func sharedHTTP2Lane() -> UpstreamConnection? {
        guard !machine.request.wantsUpgrade, !machine.clientBound, !Self.authenticatesConnections(target.entry),
              let session = context.h2Upstreams.withRoom(for: key) else { return nil }
        return UpstreamConnection.lane(on: session, tls: target.tls, context: context)
    }

    /// The version the upstream answered in, when its response's translated HTTP/1.1 head does
    /// not say it (an HTTP/2 lane), for `Via`.
    var upstreamReceivedVersion: HTTPVersion? { upstream?.isHTTP2 == true ? .http2 : nil }

    private static func authenticatesConnections(_ host: HostConfig?) -> Bool {
        host?.auth.contains { $0.schemes.contains(.ntlm) || $0.schemes.contains(.negotiate) } ?? false
    }
}
