/// RFC 1034 "preferred name syntax" (letters, digits, hyphens; labels of 1-63 octets, no
/// hyphen at either end) as RFC 5280 4.2.1.6 requires of dNSName entries and name constraints,
/// compared case-insensitively. A presented name may have `*` as its whole left-most label.
enum DNSNameSyntax {
    /// A subjectAltName dNSName: an LDH name, optionally `*.` followed by one.
    static func isValidPresented(_ name: String) -> Bool {
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard name.utf8.count <= 253, let first = labels.first else { return false }
        if first == "*" {
            return labels.count >= 2 && labels.dropFirst().allSatisfy(isLDHLabel)
        }
        return labels.allSatisfy(isLDHLabel)
    }

    /// A dNSName constraint base: an LDH name, or empty (every name). No leading period (that
    /// form belongs to URI constraints) and no wildcard.
    static func isValidConstraint(_ base: String) -> Bool {
        base.isEmpty || (base.utf8.count <= 253
            && base.split(separator: ".", omittingEmptySubsequences: false).allSatisfy(isLDHLabel))
    }

    static func isLDHLabel(_ label: Substring) -> Bool {
        let bytes = Array(label.utf8)
        guard (1...63).contains(bytes.count), bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-") else {
            return false
        }
        return bytes.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
        }
    }
}

/// RFC 5280 4.2.1.10 dNSName subtrees: a name is within a base when it equals it or adds
/// labels on its left. A wildcard name `*.S` stands for every `x.S` with one label `x`, so it
/// is within a base only when all of them are, and meets an excluded base when any one is
/// (CVE-2025-61727: `*.example.com` under an intermediate excluding `bar.example.com`).
enum DNSSubtree {
    static func isWithin(_ name: String, base: String) -> Bool {
        let name = normalized(name), base = normalized(base)
        if base.isEmpty { return true }
        if let wildcardBase = wildcardRemainder(name) {
            return isPlainWithin(wildcardBase, base)
        }
        return isPlainWithin(name, base)
    }

    static func meets(_ name: String, base: String) -> Bool {
        let name = normalized(name), base = normalized(base)
        if base.isEmpty { return true }
        guard let suffix = wildcardRemainder(name) else { return isPlainWithin(name, base) }
        if isPlainWithin(suffix, base) { return true }
        // The base is one of the names the wildcard stands for: exactly one label above `suffix`.
        guard base.hasSuffix("." + suffix) else { return false }
        return !base.dropLast(suffix.count + 1).contains(".")
    }

    private static func isPlainWithin(_ name: String, _ base: String) -> Bool {
        name == base || name.hasSuffix("." + base)
    }

    private static func wildcardRemainder(_ name: String) -> String? {
        name.hasPrefix("*.") ? String(name.dropFirst(2)) : nil
    }

    private static func normalized(_ name: String) -> String {
        let lowered = name.lowercased()
        return lowered.hasSuffix(".") ? String(lowered.dropLast()) : lowered
    }
}
