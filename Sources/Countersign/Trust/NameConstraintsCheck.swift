/// Name constraints of every CA in the verified path, anchor included, applied to the leaf's
/// DNS names: what OpenSSL's own check (which still runs, for every certificate and name
/// type) leaves out. OpenSSL compares
/// a wildcard SAN as the literal string `*.example.com`, so an intermediate excluding
/// `bar.example.com` (or permitting only `foo.example.com`) let `*.example.com` through
/// (CVE-2025-61727); here a wildcard must fit a permitted subtree entirely and meet no
/// excluded one. A constraint extension without subtrees, or a DNS base with a leading period
/// or a wildcard, is malformed (RFC 5280 4.2.1.10) and refuses the path: which names its CA
/// meant to allow cannot be known.
public struct NameConstraintsCheck: VerifiedPathCheck {
    public let storeLabel: String

    public init(storeLabel: String) {
        self.storeLabel = storeLabel
    }

    public func refusal(path: [CertificateSummary]) -> TrustRefusal? {
        for (depth, authority) in path.enumerated() where depth > 0 {
            guard let constraints = authority.profile.nameConstraints else { continue }
            let who = VerifiedPath.name(authority, depth: depth)
            if constraints.subtreeCount == 0 {
                return refused("\(who) has a name constraints extension without any subtree")
            }
            if let bad = (constraints.permittedDNS + constraints.excludedDNS).first(where: { !DNSNameSyntax.isValidConstraint($0) }) {
                return refused("\(who) has a malformed DNS name constraint \"\(bad)\"")
            }
            for name in path[0].dnsNames {
                if let excluded = constraints.excludedDNS.first(where: { DNSSubtree.meets(name, base: $0) }) {
                    return refused("the certificate names \(name), which \(who) excludes (\(excluded))")
                }
                if !constraints.permittedDNS.isEmpty,
                   !constraints.permittedDNS.contains(where: { DNSSubtree.isWithin(name, base: $0) }) {
                    return refused("the certificate names \(name), outside what \(who) permits"
                        + " (\(constraints.permittedDNS.joined(separator: ", ")))")
                }
            }
        }
        return nil
    }

    private func refused(_ details: String) -> TrustRefusal {
        TrustRefusal(kind: .invalidChain, details: "name constraints: \(details)")
    }
}
