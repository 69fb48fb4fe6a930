import COpenSSL

/// SHA-256 through OpenSSL's one-shot EVP interface: certificate fingerprints, SPKI pins,
/// and the constant-time comparison of proxy passwords.
public enum SHA256 {
    public static func hash<Bytes: Sequence>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        if let digest = bytes.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) { return digest }
        return Array(bytes).withUnsafeBytes { hash($0) }
    }

    public static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = EVP_Digest(bytes.baseAddress, bytes.count, &output, &length, EVP_sha256(), nil)
        precondition(ok == 1, "EVP_Digest with SHA-256 cannot fail on in-memory input")
        return Array(output.prefix(Int(length)))
    }
}
