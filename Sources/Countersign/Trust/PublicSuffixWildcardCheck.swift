/// The expected name must not be matched only through a wildcard directly under a public
/// suffix (`*.co.uk` for `shop.co.uk`, `*.s3.amazonaws.com` for `bucket.s3.amazonaws.com`):
/// such a wildcard speaks for every registrant below the suffix, and no CA may issue one
/// (CA/Browser Forum 3.2.2.6), as browsers refuse it too. The other names of the same
/// certificate still match (Amazon's own certificate names `s3.amazonaws.com` and
/// `*.s3.amazonaws.com`; the first one is fine).
public struct PublicSuffixWildcardCheck: TrustCheck {
    public let suffixes: PublicSuffixList

    public init(suffixes: PublicSuffixList = .shared) {
        self.suffixes = suffixes
    }

    public func refusal(for facts: ServedChainFacts) -> TrustRefusal? {
        guard facts.nameMatch == .matched, let leaf = facts.leaf else { return nil }
        let matching = leaf.dnsNames.filter {
            HostnameMatcher.matches(facts.serverName, dnsNames: [$0], ipAddresses: [])
        }
        guard let wildcard = matching.first, matching.allSatisfy(isOverPublicSuffix) else { return nil }
        let suffix = String(wildcard.dropFirst(2))
        return TrustRefusal(kind: .nameMismatch,
                            details: "name mismatch: \(facts.serverName) matches only the wildcard \(wildcard), and"
                                + " \(suffix) is a public suffix (\(suffixes.source)), so no CA may vouch for it")
    }

    private func isOverPublicSuffix(_ name: String) -> Bool {
        name.hasPrefix("*.") && suffixes.isPublicSuffix(String(name.dropFirst(2)))
    }
}
