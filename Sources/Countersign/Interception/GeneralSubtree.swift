/// One subtree of an X.509 name constraint: a DNS domain or an IP network.
public enum GeneralSubtree: Hashable, Sendable, CustomStringConvertible {
    /// RFC 5280: the name itself and every name made by adding labels on its left.
    /// The empty name is every DNS name. A leading dot (a non-standard form other tools
    /// write) means the subdomains only, as OpenSSL, Go and NSS read it.
    case dnsName(String)
    /// A network: 4 or 16 address bytes and the length of the prefix that must match.
    case ipNetwork(address: [UInt8], prefixLength: Int)

    public var description: String {
        switch self {
        case .dnsName(let name):
            return "DNS:\(name.isEmpty ? "(every name)" : name)"
        case .ipNetwork(let address, let prefixLength):
            let family = address.count == 4 ? HostLiteral.ipv4(address) : HostLiteral.ipv6(address)
            return "IP:\(family.text)/\(prefixLength)"
        }
    }

    func contains(_ host: HostLiteral) -> Bool {
        switch (self, host) {
        case (.dnsName(let base), .dnsName(let name)):
            return Self.domain(base.lowercased(), contains: name)
        case (.ipNetwork(let network, let prefixLength), _):
            guard let address = host.addressBytes, address.count == network.count else { return false }
            return Self.prefix(of: address, length: prefixLength) == Self.prefix(of: network, length: prefixLength)
        default:
            return false
        }
    }

    /// True when a host of this kind is subject to this subtree at all: RFC 5280 applies
    /// constraints per name form, so DNS subtrees say nothing about IP addresses. OpenSSL
    /// treats IPv4 and IPv6 as one form: one permitted network of either family binds both.
    func governs(_ host: HostLiteral) -> Bool {
        switch self {
        case .dnsName: return !host.isIP
        case .ipNetwork: return host.isIP
        }
    }

    /// True when every name below `suffix` is in this subtree (a "*.suffix" pattern fits whole).
    func containsEverySubdomain(of suffix: String) -> Bool {
        guard case .dnsName(let name) = self else { return false }
        let base = name.lowercased()
        if base.hasPrefix(".") { return suffix == base.dropFirst() || suffix.hasSuffix(base) }
        return Self.domain(base, contains: suffix)
    }

    /// True when some name below `suffix` is in this subtree.
    func overlapsSubdomains(of suffix: String) -> Bool {
        guard case .dnsName(let name) = self else { return false }
        let base = name.lowercased()
        return containsEverySubdomain(of: suffix) || base.hasSuffix("." + suffix)
    }

    private static func domain(_ base: String, contains name: String) -> Bool {
        if base.isEmpty { return true }
        if base.hasPrefix(".") { return name.hasSuffix(base) }
        return name == base || name.hasSuffix("." + base)
    }

    private static func prefix(of address: [UInt8], length: Int) -> [UInt8] {
        var masked = address
        for index in masked.indices {
            let bitsHere = min(max(length - index * 8, 0), 8)
            masked[index] &= bitsHere == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - bitsHere))
        }
        return masked
    }
}
