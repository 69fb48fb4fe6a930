import CountersignConfig
import CountersignHTTP
import Foundation

/// `proxy_auth` on a listener: clients authenticate to Countersign with Basic (RFC 7617)
/// in `Proxy-Authorization`. Wrong or missing credentials never reach an upstream.
enum ProxyAuthorization {
    enum Outcome: Equatable {
        case allowed(user: String)
        case denied(String)
    }

    static func check(_ headers: HeaderFields, against config: ProxyAuthConfig) -> Outcome {
        guard let value = headers["Proxy-Authorization"] else {
            return .denied("proxy authentication required")
        }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, ASCIICase.equal(parts[0], "Basic"),
              let decoded = Data(base64Encoded: String(parts[1].trimmingCharacters(in: .whitespaces))) else {
            return .denied("proxy authentication must use Basic")
        }
        let bytes = [UInt8](decoded)
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

    /// Compares without an early exit, so timing does not reveal how much of a password matched.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for index in 0..<max(a.count, b.count) {
            let x = index < a.count ? a[index] : 0
            let y = index < b.count ? b[index] : 0
            difference |= x ^ y
        }
        return difference == 0
    }
}
