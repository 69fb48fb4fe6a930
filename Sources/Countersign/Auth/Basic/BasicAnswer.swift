import CountersignSupport

/// Basic (RFC 7617): `Basic base64(user-id ":" password)`.
///
/// Both parts are sent as UTF-8, the only `charset` RFC 7617 defines, whether or not the server
/// advertised it. Unicode normalization (NFC, RFC 7613 §3.3) is not applied: the bytes of the
/// configured strings are sent as they are.
public enum BasicAnswer {
    public static func authorization(user: String, password: String, charset: String? = nil) throws -> String {
        // On UTF-8 bytes (this runs for every preemptive answer): a multi-byte sequence never
        // holds a byte below 0x80, so the byte tests are the scalar tests.
        // A colon would move the boundary between user-id and password (RFC 7617 §2).
        guard !user.utf8.contains(UInt8(ascii: ":")) else {
            throw AuthError("a Basic user-id cannot contain ':'; use a credential without one for this host")
        }
        let isControl = { (byte: UInt8) in byte < 0x20 || byte == 0x7f }
        guard !user.utf8.contains(where: isControl), !password.utf8.contains(where: isControl) else {
            throw AuthError("a Basic user-id or password cannot contain control characters (RFC 7617 §2)")
        }
        var pair = [UInt8]()
        pair.reserveCapacity(user.utf8.count + 1 + password.utf8.count)
        pair.append(contentsOf: user.utf8)
        pair.append(UInt8(ascii: ":"))
        pair.append(contentsOf: password.utf8)
        return "Basic " + Base64.encode(pair)
    }
}
