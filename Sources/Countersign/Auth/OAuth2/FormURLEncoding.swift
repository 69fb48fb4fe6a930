import CountersignSupport

/// application/x-www-form-urlencoded (WHATWG URL §5.2), used for the token request body and,
/// per RFC 6749 §2.3.1, for client_id and client_secret before they go into Basic.
public enum FormURLEncoding {
    public static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if TokenSyntax.isDigitOrAlpha(byte) || byte == UInt8(ascii: "*") || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else if byte == UInt8(ascii: " ") {
                out += "+"
            } else {
                out += "%" + Hex.encode([byte]).uppercased()
            }
        }
        return out
    }

    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { encode($0.0) + "=" + encode($0.1) }.joined(separator: "&")
    }
}
