/// Bearer (RFC 6750 §2.1): `Bearer <token>`.
public enum BearerAnswer {
    public static func authorization(token: String) throws -> String {
        // b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
        var scanner = FieldScanner(token)
        guard scanner.readToken68() != nil, scanner.atEnd else {
            throw AuthError("the bearer token contains characters RFC 6750 does not allow (only letters, digits and -._~+/ then '='); check the token file for stray whitespace or quotes")
        }
        return "Bearer " + token
    }
}
