import CountersignAuth
import CountersignConfig
import CountersignHTTP
import Foundation
import CountersignSupport

/// `proxy_auth` on a listener: clients authenticate to Countersign with Basic (RFC 7617)
/// in `Proxy-Authorization`. Wrong or missing credentials never reach an upstream.
enum ProxyAuthorization {
    enum Outcome: Equatable {
        case allowed(user: String)
        case denied(String)
    }

    static func check(_ headers: HeaderFields, against config: ProxyAuthConfig) -> Outcome {
        guard let value = headers[.proxyAuthorization] else {
            return .denied("proxy authentication required")
        }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, ASCIICase.equal(parts[0], "Basic"),
              let bytes = Base64.decode(parts[1].trimmingCharacters(in: .whitespaces)) else {
            return .denied("proxy authentication must use Basic")
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else {
            return .denied("malformed Basic credentials")
        }
        let user = String(decoding: bytes[..<colon], as: UTF8.self)
        let password = Array(bytes[(colon + 1)...])
        guard let expected = config.users[user], constantTimeEqual(expected.bytes, password) else {
            return .denied("wrong user or password")
        }
        return .allowed(user: user)
    }

    static func challenge(realm: String) -> String {
        "Basic realm=\"\(realm.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))\", charset=\"UTF-8\""
    }

    /// Compares the SHA-256 digests of both values without an early exit: equal digests mean
    /// equal values of any length (a length difference is never truncated away), and timing
    /// reveals neither how much of a password matched nor its length.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        let left = SHA256.hash(a), right = SHA256.hash(b)
        var difference: UInt8 = 0
        for (x, y) in zip(left, right) { difference |= x ^ y }
        return difference == 0 && left.count == right.count
    }
}
