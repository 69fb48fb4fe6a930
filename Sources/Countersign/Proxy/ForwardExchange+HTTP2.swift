import CountersignConfig

/// Sharing an HTTP/2 upstream connection: an exchange that found no idle connection takes a
/// lane of one with room, unless its credentials authenticate connections (NTLM, Negotiate,
/// or the client's own), which are never multiplexed across exchanges.
extension ForwardExchange {
    func sharedHTTP2Lane() -> UpstreamConnection? {
        guard !machine.clientBound, !Self.authenticatesConnections(target.entry),
              let session = context.h2Upstreams.withRoom(for: key) else { return nil }
        return UpstreamConnection.lane(on: session, tls: target.tls, context: context)
    }

    private static func authenticatesConnections(_ host: HostConfig?) -> Bool {
        host?.auth.contains { $0.schemes.contains(.ntlm) || $0.schemes.contains(.negotiate) } ?? false
    }
}
