import CountersignSupport

/// SPKI pins as `countersign pin` prints them: `sha256//BASE64` (curl's form) or `sha256/BASE64`
/// (HPKP's), always the 32-byte SHA-256 of a SubjectPublicKeyInfo.
public enum PinParser {
    public static func sha256(from text: String) throws -> [UInt8] {
        let expected = "expected \"sha256//\" followed by the base64 of a 32-byte SHA-256, e.g. \"sha256//r8udi/Mxd6pLOS73ElSfLb5bgwSMuZx5MVIjnTYGd+I=\" (`countersign pin HOST` prints them)"
        guard text.hasPrefix("sha256/") else {
            throw ValueError("\"\(text)\" is not a pin; \(expected)")
        }
        guard let data = Base64.decodePinDigest(afterSlash: text.dropFirst(7)) else {
            throw ValueError("\"\(text)\" is not valid base64; \(expected)")
        }
        guard data.count == 32 else {
            throw ValueError("\"\(text)\" decodes to \(data.count) bytes, not 32; \(expected)")
        }
        return data
    }
}
