import CLibevent
import CountersignConfig

/// The address a client connected from, decoded once at accept.
struct PeerAddress: CustomStringConvertible {
    let ip: IPAddress?
    let port: UInt16

    init(_ address: UnsafePointer<sockaddr>?) {
        guard let address else {
            ip = nil
            port = 0
            return
        }
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            let v4 = UnsafeRawPointer(address).assumingMemoryBound(to: sockaddr_in.self).pointee
            var raw = v4.sin_addr.s_addr
            let bytes = withUnsafeBytes(of: &raw) { Array($0) }
            ip = .v4(bytes)
            port = UInt16(bigEndian: v4.sin_port)
        case AF_INET6:
            let v6 = UnsafeRawPointer(address).assumingMemoryBound(to: sockaddr_in6.self).pointee
            var raw = v6.sin6_addr
            let bytes = withUnsafeBytes(of: &raw) { Array($0) }
            ip = .v6(bytes)
            port = UInt16(bigEndian: v6.sin6_port)
        default:
            ip = nil
            port = 0
        }
    }

    var description: String {
        guard let ip else { return "unknown" }
        if case .v6 = ip { return "[\(ip)]:\(port)" }
        return "\(ip):\(port)"
    }

    func isAllowed(by allow: [CIDR]) -> Bool {
        guard let ip else { return false }
        return allow.contains { $0.contains(ip) }
    }
}
