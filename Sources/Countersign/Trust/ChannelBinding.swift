import COpenSSL
import CountersignSupport

/// RFC 5929 `tls-server-end-point`: the served leaf hashed with its signature's digest,
/// except that MD5 and SHA-1 are replaced by SHA-256. NTLMv2 and SCRAM bind to it.
public enum ChannelBinding {
    /// The hash itself (the caller prefixes "tls-server-end-point:" where its protocol wants it).
    public static func tlsServerEndPoint(_ leaf: Certificate) -> [UInt8] {
        let name = leaf.signatureDigestName.uppercased()
        // Ed25519/Ed448 sign without a separate digest; SHA-256 is the common choice for them.
        guard !["MD5", "SHA1", "NONE"].contains(name), let digest = EVP_get_digestbyname(leaf.signatureDigestName) else {
            return SHA256.hash(leaf.der)
        }
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = leaf.der.withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &output, &length, digest, nil) }
        guard ok == 1 else { return SHA256.hash(leaf.der) }
        return Array(output.prefix(Int(length)))
    }
}
