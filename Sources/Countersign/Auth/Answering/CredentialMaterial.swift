/// The secret behind a credential name, resolved by the configuration layer.
public indirect enum CredentialMaterial: Sendable, CustomStringConvertible {
    /// A user and password: Basic, Digest and NTLM (`DOMAIN\user` or `user@domain` for NTLM).
    case password(user: String, password: String, workstation: String?)
    /// An NT hash (16 bytes) instead of a password: NTLM only.
    case ntHash(user: String, hash: [UInt8], workstation: String?)
    /// A static bearer token.
    case token(String)
    /// An OAuth2 client and the token currently cached for it, if any.
    case oauth2(OAuth2Client, token: OAuth2Token?)
    /// Kerberos for Negotiate; `alongside`, a password or NT hash for the other schemes (NTLM
    /// when no ticket can be had).
    case kerberos(KerberosCredential, alongside: CredentialMaterial?)

    /// What answers `scheme`: the Kerberos part for Negotiate, the identity kept alongside it
    /// for every other scheme; any other credential as it is.
    func material(for scheme: AuthSchemeName) -> CredentialMaterial? {
        guard case .kerberos(_, let alongside) = self else { return self }
        return scheme == .negotiate ? self : alongside
    }

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
        case .kerberos(let kerberos, let alongside): return "\(kerberos)" + (alongside.map { " with a \($0)" } ?? "")
        }
    }
}
