import COpenSSL

/// Random bytes from OpenSSL's CSPRNG, for client nonces and NTLM session keys.
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: count)
        guard RAND_bytes(&output, Int32(count)) == 1 else {
            preconditionFailure("OpenSSL's random generator failed; refusing to continue with predictable nonces")
        }
        return output
    }
}
