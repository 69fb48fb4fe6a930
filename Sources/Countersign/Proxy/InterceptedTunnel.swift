import CountersignConfig
import CountersignHTTP

/// What an intercepted CONNECT fixed for the rest of its connection. A class, so a
/// client connection carries one reference rather than a whole host entry.
final class InterceptedTunnel {
    let authority: Authority
    let host: HostConfig
    var handshakeDone = false

    init(authority: Authority, host: HostConfig) {
        self.authority = authority
        self.host = host
    }

    /// RFC 9110 §7.4: a request inside this tunnel for any other authority is misdirected.
    func accepts(hostField: String?) -> Bool {
        guard let hostField, let parsed = try? Authority.parse(Substring(hostField), defaultPort: 443) else { return false }
        return parsed == authority
    }
}
