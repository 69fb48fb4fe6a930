/// A socket address to listen on: `127.0.0.1:3128`, `[::1]:3128`, `0.0.0.0:3129`, `localhost:8080`.
/// Port 0 asks the system for a free port (useful in tests).
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    public init(parsing text: String) throws {
        let form = "write it as HOST:PORT, e.g. \"127.0.0.1:3128\" or \"[::1]:3128\""
        guard let (host, portText) = HostName.splitHostPort(text) else {
            if text.filter({ $0 == ":" }).count > 1 {
                throw ValueError("\"\(text)\" is ambiguous: put IPv6 addresses in brackets, e.g. \"[::1]:3128\"")
            }
            throw ValueError("\"\(text)\" is not a listen address; \(form)")
        }
        if host.contains(":") && !text.hasPrefix("[") {
            throw ValueError("\"\(text)\" is ambiguous: put IPv6 addresses in brackets, e.g. \"[::1]:3128\"")
        }
        guard let portText else { throw ValueError("\"\(text)\" has no port; \(form)") }
        guard let port = HostName.parsePort(portText, allowZero: true) else {
            throw ValueError("\"\(text)\" has a bad port \"\(portText)\"; ports are 0 to 65535")
        }
        if text.hasPrefix("[") {
            guard case .v6? = IPAddress(host) else {
                throw ValueError("\"\(text)\": only IPv6 addresses go in brackets")
            }
        } else if IPAddress(host) == nil && !HostName.isValidDNSName(host) {
            throw ValueError("\"\(text)\" has a bad host \"\(host)\"; \(form)")
        }
        self.init(host: host, port: port)
    }

    /// True for `0.0.0.0` and `::`, which bind every interface and so clash with any other
    /// address on the same port.
    public var isWildcard: Bool {
        IPAddress(host).map { $0.bytes.allSatisfy { $0 == 0 } } ?? false
    }

    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
