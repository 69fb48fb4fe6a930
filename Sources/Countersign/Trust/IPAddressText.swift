import COpenSSL
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Converts between IP address text and bytes with inet_pton/inet_ntop, so that
/// "::1" and "0:0::1" compare equal.
enum IPAddressText {
    /// 4 or 16 bytes for an IPv4 or IPv6 literal (brackets allowed), nil for anything else.
    static func parse(_ text: String) -> [UInt8]? {
        var literal = text
        if literal.hasPrefix("["), literal.hasSuffix("]") {
            literal = String(literal.dropFirst().dropLast())
        }
        var v4 = [UInt8](repeating: 0, count: 4)
        if inet_pton(AF_INET, literal, &v4) == 1 { return v4 }
        var v6 = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET6, literal, &v6) == 1 { return v6 }
        return nil
    }

    static func format(_ bytes: [UInt8]) -> String? {
        let family: Int32
        switch bytes.count {
        case 4: family = AF_INET
        case 16: family = AF_INET6
        default: return nil
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(family, bytes, &text, socklen_t(text.count)) != nil else { return nil }
        return String(cString: text)
    }
}
