import COpenSSL

/// Converts between this module's host and subtree values and OpenSSL `GENERAL_NAME`s.
enum GeneralNames {
    /// A dNSName or iPAddress general name; the caller owns the result.
    static func make(dnsName name: String) -> UnsafeMutablePointer<GENERAL_NAME> {
        let string = ASN1_IA5STRING_new()!
        ASN1_STRING_set(string, name, Int32(name.utf8.count))
        let general = GENERAL_NAME_new()!
        GENERAL_NAME_set0_value(general, GEN_DNS, string)
        return general
    }

    /// An iPAddress general name holding `octets`: the address for a SAN, address and mask
    /// for a name-constraint subtree.
    static func make(ipOctets octets: [UInt8]) -> UnsafeMutablePointer<GENERAL_NAME> {
        let string = ASN1_OCTET_STRING_new()!
        ASN1_OCTET_STRING_set(string, octets, Int32(octets.count))
        let general = GENERAL_NAME_new()!
        GENERAL_NAME_set0_value(general, GEN_IPADD, string)
        return general
    }

    static func make(subtree: GeneralSubtree) -> UnsafeMutablePointer<GENERAL_NAME> {
        switch subtree {
        case .dnsName(let name):
            return make(dnsName: name)
        case .ipNetwork(let address, let prefixLength):
            return make(ipOctets: address + mask(prefixLength: prefixLength, byteCount: address.count))
        }
    }

    /// The subtree a name-constraint general name describes, or nil for forms this module
    /// does not use (e-mail, URI, directory names).
    static func subtree(from general: UnsafeMutablePointer<GENERAL_NAME>) -> GeneralSubtree? {
        switch general.pointee.type {
        case GEN_DNS:
            return .dnsName(String(decoding: bytes(of: general.pointee.d.dNSName), as: UTF8.self))
        case GEN_IPADD:
            let octets = bytes(of: general.pointee.d.iPAddress)
            guard octets.count == 8 || octets.count == 32 else { return nil }
            let half = octets.count / 2
            let prefixLength = octets[half...].reduce(0) { $0 + $1.nonzeroBitCount }
            return .ipNetwork(address: Array(octets[..<half]), prefixLength: prefixLength)
        default:
            return nil
        }
    }

    static func mask(prefixLength: Int, byteCount: Int) -> [UInt8] {
        (0..<byteCount).map { index in
            let bits = min(max(prefixLength - index * 8, 0), 8)
            return bits == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
        }
    }

    private static func bytes(of string: UnsafeMutablePointer<ASN1_STRING>?) -> [UInt8] {
        guard let string, let data = ASN1_STRING_get0_data(string) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(string))))
    }
}
