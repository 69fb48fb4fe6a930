import COpenSSL
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A served leaf whose subject commonName is an IP address must spell it as the canonical
/// text of one of its subjectAltName addresses (dotted decimal; RFC 5952 for IPv6), as the
/// CA/Browser Forum requires (7.1.4.3). Other spellings (`0xC0A80101`, `192.168.001.001`,
/// which some parsers read as octal, upper-case or uncompressed IPv6) are read as different
/// addresses by different clients: a certificate that relies on that is misissued. The proxy
/// itself never matches on the CN; a CN that is a host name or a label is left alone (the
/// byte-for-byte CN = SAN rule would refuse many internal certificates, see Tests/limbo).
public struct CommonNameAddressCheck: TrustCheck {
    public init() {}

    public func refusal(for facts: ServedChainFacts) -> TrustRefusal? {
        guard let leaf = facts.leaf else { return nil }
        for commonName in leaf.profile.commonNames {
            guard let canonical = CommonNameAddressCheck.canonicalAddress(commonName) else { continue }
            if commonName == canonical && leaf.ipAddresses.contains(canonical) { continue }
            let listed = leaf.ipAddresses.isEmpty ? "none" : leaf.ipAddresses.joined(separator: ", ")
            return TrustRefusal(kind: .invalidChain,
                                details: "misissued certificate: its common name \(commonName) is the address \(canonical),"
                                    + " which must be written as one of its subjectAltName addresses (\(listed))")
        }
        return nil
    }

    /// The canonical text of the address `text` spells, in any of the forms resolvers accept
    /// (inet_pton for IPv6; inet_aton for dotted or 0x-prefixed IPv4), or nil when it is not one.
    /// A bare decimal number ("12345", a device number) is not taken for an address.
    static func canonicalAddress(_ text: String) -> String? {
        if text.contains(":") {
            return IPAddressText.parse(text).flatMap(IPAddressText.format)
        }
        guard text.contains(".") || text.lowercased().hasPrefix("0x") else { return nil }
        var address = in_addr()
        guard inet_aton(text, &address) != 0 else { return nil }
        let bytes = withUnsafeBytes(of: address.s_addr) { Array($0) }
        return IPAddressText.format(bytes)
    }
}
