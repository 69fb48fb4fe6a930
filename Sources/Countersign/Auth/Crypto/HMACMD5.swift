import COpenSSL

/// HMAC-MD5 (RFC 2104), the keyed hash at the heart of NTLMv2.
public enum HMACMD5 {
    public static func authenticate(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let algorithm = MessageDigest.algorithm(.md5)
        let result = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                HMAC(algorithm, keyBytes.baseAddress, Int32(key.count),
                     messageBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count,
                     &output, &length)
            }
        }
        precondition(result != nil, "OpenSSL HMAC-MD5 failed")
        return Array(output.prefix(Int(length)))
    }
}
