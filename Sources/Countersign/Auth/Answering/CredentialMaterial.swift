/// The secret behind a credential name, resolved by the configuration layer.
public enum CredentialMaterial: Sendable, CustomStringConvertible {
    /// A user and password: Basic, Digest and NTLM (`DOMAIN\user` or `user@domain` for NTLM).
    case password(user: String, password: String, workstation: String?)
    /// An NT hash (16 bytes) instead of a password: NTLM only.
    case ntHash(user: String, hash: [UInt8], workstation: String?)
    /// A static bearer token.
    case token(String)
    /// An OAuth2 client and the token currently cached for it, if any.
    case oauth2(OAuth2Client, token: OAuth2Token?)

    /// The OAuth2 client of an `oauth2` credential; nil for every other kind.
    public var oauth2Client: OAuth2Client? {
        if case .oauth2(let client, _) = self { return client }
        return nil
    }

    public var description: String {
        switch self {
        case .password(let user, _, _): return "password credential for \(user)"
        case .ntHash(let user, _, _): return "NT hash credential for \(user)"
        case .token: return "bearer token credential"
        case .oauth2(let client, _): return "\(client)"
        }
    }
}
