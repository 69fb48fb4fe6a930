/// The X.509 name constraints of an interception CA: which hosts its leaves may name.
///
/// Built from the configured host patterns so that a stolen CA key cannot impersonate
/// anything else. Every subtree uses the RFC 5280 form (no leading dot), which every
/// verifier reads the same way; its cost is that a subtree also admits the names below it:
/// - "api.example.com" becomes DNS api.example.com, which also admits x.api.example.com
///   (RFC 5280 has no "exactly this name" form);
/// - "*.example.com" becomes DNS example.com, which also admits example.com itself
///   (".example.com" would exclude it in OpenSSL, Go and NSS, but it is not RFC 5280
///   syntax: linters flag it and stricter parsers may reject the whole CA);
/// - an IP literal becomes a /32 or /128 network.
/// A name form with nothing permitted is excluded whole, as the CA/Browser Forum asks of
/// constrained CAs; otherwise a DNS-only CA could still sign for any IP address.
public struct NameConstraints: Equatable, Sendable, CustomStringConvertible {
    public var permitted: [GeneralSubtree]
    public var excluded: [GeneralSubtree]

    public init(permitted: [GeneralSubtree], excluded: [GeneralSubtree]) {
        self.permitted = permitted
        self.excluded = excluded
    }

    /// Constraints admitting the hosts named by `hostPatterns`: "host", "host:port",
    /// "*.suffix", IPv4 and IPv6 literals (IPv6 with a port in brackets).
    public static func permitting(hostPatterns: [String]) throws -> NameConstraints {
        var subtrees: [GeneralSubtree] = []
        for pattern in hostPatterns {
            let subtree = try subtree(forPattern: pattern)
            if !subtrees.contains(subtree) { subtrees.append(subtree) }
        }
        // Drop domains already admitted by a broader one ("*.example.com" covers "api.example.com").
        let permitted = subtrees.filter { subtree in
            guard case .dnsName(let name) = subtree else { return true }
            return !subtrees.contains { other in
                other != subtree && other.contains(.dnsName(name))
            }
        }
        return NameConstraints(permitted: permitted, excluded: excludedForms(absentFrom: permitted))
    }

    /// Whether leaves for `host` are inside these constraints, judged as OpenSSL judges them.
    /// `host` is a DNS name or an IP literal, or a configured pattern: "host:port", "[v6]:port",
    /// or "*.suffix", which is permitted only when every name below the suffix is.
    public func permits(host: String) -> Bool {
        let host = Self.hostPart(of: host)
        if host.hasPrefix("*.") {
            guard case .dnsName(let suffix)? = HostLiteral(String(host.dropFirst(2))) else { return false }
            return permitsEverySubdomain(of: suffix)
        }
        guard let literal = HostLiteral(host) else { return false }
        if excluded.contains(where: { $0.contains(literal) }) { return false }
        let governing = permitted.filter { $0.governs(literal) }
        return governing.isEmpty || governing.contains { $0.contains(literal) }
    }

    private func permitsEverySubdomain(of suffix: String) -> Bool {
        if excluded.contains(where: { $0.overlapsSubdomains(of: suffix) }) { return false }
        let governing = permitted.filter { if case .dnsName = $0 { return true } else { return false } }
        return governing.isEmpty || governing.contains { $0.containsEverySubdomain(of: suffix) }
    }

    public var description: String {
        var parts: [String] = []
        if !permitted.isEmpty { parts.append("permitted " + permitted.map(\.description).joined(separator: ", ")) }
        if !excluded.isEmpty { parts.append("excluded " + excluded.map(\.description).joined(separator: ", ")) }
        return parts.joined(separator: "; ")
    }

    static func subtree(forPattern pattern: String) throws -> GeneralSubtree {
        let host = hostPart(of: pattern)
        if host.hasPrefix("*.") {
            let suffix = String(host.dropFirst(2))
            guard case .dnsName(let domain)? = HostLiteral(suffix) else {
                throw InterceptionError("the host pattern \"\(pattern)\" is not a DNS name, a *.suffix wildcard or an IP literal")
            }
            return .dnsName(domain)
        }
        switch HostLiteral(host) {
        case .dnsName(let name)?: return .dnsName(name)
        case .ipv4(let bytes)?: return .ipNetwork(address: bytes, prefixLength: 32)
        case .ipv6(let bytes)?: return .ipNetwork(address: bytes, prefixLength: 128)
        case nil:
            throw InterceptionError("the host pattern \"\(pattern)\" is not a DNS name, a *.suffix wildcard or an IP literal")
        }
    }

    /// The host of "host:port", "[v6]:port", "[v6]" or a bare IPv6 literal.
    static func hostPart(of pattern: String) -> String {
        if pattern.hasPrefix("["), let close = pattern.firstIndex(of: "]") {
            return String(pattern[pattern.index(after: pattern.startIndex)..<close])
        }
        let colons = pattern.filter { $0 == ":" }.count
        if colons == 1, let colon = pattern.firstIndex(of: ":") {
            return String(pattern[..<colon])
        }
        return pattern
    }

    private static func excludedForms(absentFrom permitted: [GeneralSubtree]) -> [GeneralSubtree] {
        var hasDNS = false, hasIPv4 = false, hasIPv6 = false
        for subtree in permitted {
            switch subtree {
            case .dnsName: hasDNS = true
            case .ipNetwork(let address, _): if address.count == 4 { hasIPv4 = true } else { hasIPv6 = true }
            }
        }
        var excluded: [GeneralSubtree] = []
        if !hasDNS { excluded.append(.dnsName("")) }
        if !hasIPv4 { excluded.append(.ipNetwork(address: [0, 0, 0, 0], prefixLength: 0)) }
        if !hasIPv6 { excluded.append(.ipNetwork(address: [UInt8](repeating: 0, count: 16), prefixLength: 0)) }
        return excluded
    }
}
