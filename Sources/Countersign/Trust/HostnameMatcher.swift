/// RFC 6125 reference-identity matching against a certificate's subjectAltName:
/// DNS names compare case-insensitively; a presented name may have a single `*` as its
/// whole left-most label, matching exactly one label, and only under at least two more
/// labels (so `*.com` matches nothing); IP literals match iPAddress entries only, never a
/// wildcard; the subject CN is never consulted.
public enum HostnameMatcher {
    public static func match(_ reference: String, dnsNames: [String], ipAddresses: [String]) -> NameMatch {
        matches(reference, dnsNames: dnsNames, ipAddresses: ipAddresses)
            ? .matched : .mismatch(presented: dnsNames + ipAddresses)
    }

    public static func matches(_ reference: String, dnsNames: [String], ipAddresses: [String]) -> Bool {
        if let address = IPAddressText.parse(reference) {
            return ipAddresses.contains { IPAddressText.parse($0) == address }
        }
        let referenceLabels = labels(reference)
        guard !referenceLabels.isEmpty, !referenceLabels.contains(where: { $0.isEmpty || $0.contains("*") }) else {
            return false
        }
        return dnsNames.contains { presentedMatches($0, referenceLabels) }
    }

    private static func presentedMatches(_ presented: String, _ reference: [Substring]) -> Bool {
        let presentedLabels = labels(presented)
        guard presentedLabels.count == reference.count, !presentedLabels.contains(where: \.isEmpty) else {
            return false
        }
        for (index, label) in presentedLabels.enumerated() {
            if label == "*" && index == 0 && presentedLabels.count >= 3 { continue }
            if label.contains("*") || label != reference[index] { return false }
        }
        return true
    }

    /// Lower-cased labels, ignoring one trailing dot (an absolute name).
    private static func labels(_ name: String) -> [Substring] {
        var lowered = Substring(name.lowercased())
        if lowered.hasSuffix(".") { lowered = lowered.dropLast() }
        guard !lowered.isEmpty else { return [] }
        return lowered.split(separator: ".", omittingEmptySubsequences: false)
    }
}
