/// Basic (RFC 7617): `Basic base64(user-id ":" password)`.
///
/// Both parts are sent as UTF-8, the only `charset` RFC 7617 defines, whether or not the server
/// advertised it. Unicode normalization (NFC, RFC 7613 §3.3) is not applied: the bytes of the
/// configured strings are sent as they are.
public enum BasicAnswer {
    public static func authorization(user: String, password: String, charset: String? = nil) throws -> String {
        // A colon would move the boundary between user-id and password (RFC 7617 §2).
        guard !user.contains(":") else {
            throw AuthError("a Basic user-id cannot contain ':'; use a credential without one for this host")
        }
        guard !(user + password).unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw AuthError("a Basic user-id or password cannot contain control characters (RFC 7617 §2)")
        }
        return "Basic " + Base64.encode(Array("\(user):\(password)".utf8))
    }
}
