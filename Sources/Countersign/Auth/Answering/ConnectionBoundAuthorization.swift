/// Schemes that authenticate the connection rather than the request (IIS semantics): once
/// the handshake completes, every later request on that connection is served as that user,
/// with or without an `Authorization` field. A connection that carried a client's own such
/// authorization therefore belongs to that client connection and may serve nobody else
/// (SPEC "Proxy behaviour").
public enum ConnectionBoundAuthorization {
    /// `Kerberos` is the scheme name some old clients use for what is now `Negotiate`.
    static let schemes = ["ntlm", "negotiate", "kerberos"]

    /// Whether any of these `Authorization` field values uses a connection-bound scheme.
    /// A value whose scheme cannot be read counts too: a server may read it differently.
    public static func isPresent(inAuthorization values: [String]) -> Bool {
        values.contains { value in
            let trimmed = value.drop { $0 == " " || $0 == "\t" || $0 == "," }
            let scheme = String(trimmed.prefix { $0 != " " && $0 != "\t" && $0 != "," })
            return schemes.contains(TokenSyntax.lowercased(scheme)) || !TokenSyntax.isToken(scheme)
        }
    }
}
