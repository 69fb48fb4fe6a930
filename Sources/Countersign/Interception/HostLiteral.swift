import COpenSSL
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A host as a client names it in CONNECT or SNI: a DNS name or an IP literal.
/// Names are lower-cased without a trailing dot; IPv6 may come in brackets.
enum HostLiteral: Hashable, Sendable {
    case dnsName(String)
    case ipv4([UInt8])
    case ipv6([UInt8])

    init?(_ text: String) {
        var host = text
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if let bytes = Self.address(host, family: AF_INET, length: 4) {
            self = .ipv4(bytes)
        } else if let bytes = Self.address(host, family: AF_INET6, length: 16) {
            self = .ipv6(bytes)
        } else {
            if host.hasSuffix(".") { host.removeLast() }
            guard Self.isDNSName(host) else { return nil }
            self = .dnsName(host.lowercased())
        }
    }

    var isIP: Bool {
        if case .dnsName = self { return false }
        return true
    }

    /// The address bytes of an IP literal, as carried in an iPAddress general name.
    var addressBytes: [UInt8]? {
        switch self {
        case .dnsName: return nil
        case .ipv4(let bytes), .ipv6(let bytes): return bytes
        }
    }

    /// The canonical text: the lower-case name, or the address as inet_ntop prints it.
    var text: String {
        switch self {
        case .dnsName(let name): return name
        case .ipv4(let bytes): return Self.format(bytes, family: AF_INET)
        case .ipv6(let bytes): return Self.format(bytes, family: AF_INET6)
        }
    }

    /// Letters, digits, hyphens and underscores in non-empty labels of at most 63 octets.
    /// (Underscores appear in real internal host names; certificates carry them fine.)
    static func isDNSName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        for label in name.split(separator: ".", omittingEmptySubsequences: false) {
            guard !label.isEmpty, label.utf8.count <= 63,
                  label.first != "-", label.last != "-",
                  label.utf8.allSatisfy({ byte in
                      (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
                          || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x5F
                  }) else { return false }
        }
        return true
    }

    private static func address(_ text: String, family: Int32, length: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: 16)
        guard inet_pton(family, text, &bytes) == 1 else { return nil }
        return Array(bytes.prefix(length))
    }

    private static func format(_ bytes: [UInt8], family: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        _ = inet_ntop(family, bytes, &buffer, socklen_t(buffer.count))
        return String(cString: buffer)
    }
}
