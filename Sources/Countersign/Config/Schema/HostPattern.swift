/// A key under `hosts`: `host`, `host:port`, `*.suffix` (optionally with a port), or an IP
/// literal (`10.0.0.5`, `::1`, `[::1]:8443`). Names are kept normalized (lower case, IPv6 canonical).
public struct HostPattern: Sendable, Hashable, CustomStringConvertible {
    /// For a wildcard, the suffix after `*.`; otherwise the host itself.
    public var host: String
    public var port: UInt16?
    public var isWildcard: Bool

    public init(parsing text: String) throws {
        let forms = "write \"host\", \"host:port\", \"*.example.com\" or an IP address such as \"[::1]:8443\""
        var body = text
        let wildcard = text.hasPrefix("*.")
        if wildcard { body = String(text.dropFirst(2)) }
        guard let (host, portText) = HostName.splitHostPort(body), !host.isEmpty else {
            throw ValueError("\"\(text)\" is not a host pattern; \(forms)")
        }
        if host.contains("*") || body.contains("*") {
            throw ValueError("\"\(text)\": `*` is allowed only as the whole first label, as in \"*.example.com\"")
        }
        var port: UInt16?
        if let portText {
            guard let parsed = HostName.parsePort(portText, allowZero: false) else {
                throw ValueError("\"\(text)\" has a bad port \"\(portText)\"; ports are 1 to 65535")
            }
            port = parsed
        }
        let isAddress = IPAddress(host) != nil
        if wildcard && isAddress {
            throw ValueError("\"\(text)\": wildcards apply to names, not IP addresses")
        }
        if !isAddress && !HostName.isValidDNSName(host) {
            throw ValueError("\"\(text)\" has a bad host name \"\(host)\"; \(forms)")
        }
        self.host = HostName.normalize(host)
        self.port = port
        self.isWildcard = wildcard
    }

    public var description: String {
        let name = (isWildcard ? "*." : "") + host
        guard let port else { return name }
        return host.contains(":") ? "[\(name)]:\(port)" : "\(name):\(port)"
    }
}
