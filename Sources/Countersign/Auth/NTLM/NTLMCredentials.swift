/// The account NTLM proves: user, domain and the NT hash (MD4 of the UTF-16LE password).
/// Holding only the hash is enough, so credentials may be configured without a plaintext password.
public struct NTLMCredentials: Sendable, CustomStringConvertible {
    public let user: String
    public let domain: String
    let ntHash: [UInt8]

    public init(user: String, domain: String, ntHash: [UInt8]) throws {
        guard ntHash.count == 16 else {
            throw AuthError("an NT hash is 16 bytes (32 hex digits); the configured one has \(ntHash.count) bytes")
        }
        self.user = user
        self.domain = domain
        self.ntHash = ntHash
    }

    public init(user: String, domain: String, password: String) {
        self.user = user
        self.domain = domain
        ntHash = MessageDigest.hash(.md4, NTLMText.utf16LittleEndian(password))
    }

    /// `DOMAIN\user` splits at the backslash; `user@domain` is a UPN and goes whole in the user
    /// field with an empty domain, as Windows clients send it; a bare name has an empty domain.
    public init(account: String, password: String) {
        let (user, domain) = NTLMCredentials.split(account)
        self.init(user: user, domain: domain, password: password)
    }

    public init(account: String, ntHash: [UInt8]) throws {
        let (user, domain) = NTLMCredentials.split(account)
        try self.init(user: user, domain: domain, ntHash: ntHash)
    }

    static func split(_ account: String) -> (user: String, domain: String) {
        if let slash = account.firstIndex(of: "\\") {
            return (String(account[account.index(after: slash)...]), String(account[..<slash]))
        }
        return (account, "")
    }

    /// NTOWFv2 (MS-NLMP §3.3.2): HMAC_MD5(NT hash, UNICODE(Uppercase(user) + domain)).
    public var responseKeyNT: [UInt8] {
        HMACMD5.authenticate(key: ntHash, message: NTLMText.utf16LittleEndian(user.uppercased() + domain))
    }

    public var description: String { domain.isEmpty ? "NTLM account \(user)" : "NTLM account \(domain)\\\(user)" }
}
