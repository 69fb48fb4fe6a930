import CountersignAuth

/// A worker's last auth target: a host with auth rules sees one origin request after request,
/// and making its `AuthTarget` lower-cases and hashes the host each time. With it, the
/// worker's last preemptive plan (`PreemptivePlanMemo`). One slot, one worker: no lock.
final class AuthTargetCache {
    /// An object: compared in place, where a tuple in an optional was copied out whole (~150
    /// instructions a request).
    private final class Last {
        let host: String
        let port: UInt16
        let target: AuthTarget

        init(host: String, port: UInt16, target: AuthTarget) {
            self.host = host
            self.port = port
            self.target = target
        }
    }

    private var last: Last?
    /// The plan of the worker's last exchange with a host that has auth rules.
    let plans = PreemptivePlanMemo()

    func target(host: String, port: UInt16) -> AuthTarget {
        if let last, last.port == port, last.host == host { return last.target }
        let made = AuthTarget(host: host, port: Int(port))
        last = Last(host: host, port: port, target: made)
        return made
    }
}
