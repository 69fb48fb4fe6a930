import COpenSSL

/// SHA-256 through OpenSSL's low-level one-shot call (`cs_sha256`: EVP_Digest fetched the
/// method and made a context around every call): certificate fingerprints, SPKI pins, the
/// constant-time comparison of proxy passwords, and SigV4's payload and chunk hashes.
public enum SHA256 {
    public static func hash<Bytes: Sequence>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        if let digest = bytes.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) { return digest }
        return Array(bytes).withUnsafeBytes { hash($0) }
    }

    public static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { output, count in
            cs_sha256(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, output.baseAddress!)
            count = 32
        }
    }
}
