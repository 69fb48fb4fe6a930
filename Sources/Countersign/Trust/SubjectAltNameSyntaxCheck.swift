/// Every dNSName of the served leaf must be a well-formed host name (RFC 5280 4.2.1.6: the
/// preferred name syntax; `*` only as the whole left-most label). A malformed entry such as
/// `.example.com` or `foo_bar.example.com` would otherwise slip past name constraints that
/// compare strings, and no conforming CA issues one.
public struct SubjectAltNameSyntaxCheck: TrustCheck {
    public init() {}

    public func refusal(for facts: ServedChainFacts) -> TrustRefusal? {
        guard let bad = facts.leaf?.dnsNames.first(where: { !DNSNameSyntax.isValidPresented($0) }) else { return nil }
        return TrustRefusal(kind: .invalidChain,
                            details: "malformed certificate: the subjectAltName \"\(bad)\" is not a valid DNS name")
    }
}
