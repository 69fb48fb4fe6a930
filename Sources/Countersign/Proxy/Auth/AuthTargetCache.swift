import CountersignAuth

/// A worker's last auth target: a host with auth rules sees one origin request after request,
/// and making its `AuthTarget` lower-cases and hashes the host each time. One slot, one worker:
/// no lock.
final class AuthTargetCache {
    private var last: (host: String, port: UInt16, target: AuthTarget)?

    func target(host: String, port: UInt16) -> AuthTarget {
        if let last, last.port == port, last.host == host { return last.target }
        let made = AuthTarget(host: host, port: Int(port))
        last = (host, port, made)
        return made
    }
}
