import CEventSSL

/// `tls-server-end-point` channel bindings (RFC 5929 §4) in the form NTLM carries them:
/// MsvAvChannelBindings is the MD5 of a gss_channel_bindings_struct whose only content is the
/// application data "tls-server-end-point:" + hash of the server's certificate.
public enum TLSChannelBinding {
    /// The 16-byte MsvAvChannelBindings value for an already computed certificate hash.
    public static func ntlmAVValue(certificateHash: [UInt8]) -> [UInt8] {
        let applicationData = self.applicationData(certificateHash: certificateHash)
        var structure: [UInt8] = []
        for _ in 0..<4 { structure.appendLittleEndian(UInt32(0)) }  // no initiator/acceptor addresses
        structure.appendLittleEndian(UInt32(applicationData.count))
        structure += applicationData
        return MessageDigest.hash(.md5, structure)
    }

    /// RFC 5929's channel binding data, as GSSAPI takes it in gss_channel_bindings_struct's
    /// application_data (RFC 4121 §4.1.1.2): "tls-server-end-point:" and the certificate hash.
    public static func applicationData(certificateHash: [UInt8]) -> [UInt8] {
        Array("tls-server-end-point:".utf8) + certificateHash
    }

    /// The MsvAvChannelBindings value for the certificate the server actually served (DER).
    public static func ntlmAVValue(certificateDER: [UInt8]) throws -> [UInt8] {
        ntlmAVValue(certificateHash: try certificateHash(der: certificateDER))
    }

    /// The certificate hash of RFC 5929 §4.1: the hash of the certificate's signature algorithm,
    /// except that MD5 and SHA-1 (and algorithms without a separate hash, such as Ed25519) use SHA-256.
    public static func certificateHash(der: [UInt8]) throws -> [UInt8] {
        let certificate: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
        guard let certificate else {
            throw AuthError("the server certificate could not be decoded as DER, so no TLS channel binding can be computed")
        }
        defer { X509_free(certificate) }
        var digestNID: Int32 = NID_undef
        var keyNID: Int32 = NID_undef
        _ = OBJ_find_sigid_algs(X509_get_signature_nid(certificate), &digestNID, &keyNID)
        if digestNID == NID_undef || digestNID == NID_md5 || digestNID == NID_sha1 || digestNID == NID_md5_sha1 {
            digestNID = NID_sha256
        }
        guard let algorithm = EVP_get_digestbyname(OBJ_nid2sn(digestNID)) else {
            throw AuthError("the server certificate is signed with a hash OpenSSL does not provide, so no TLS channel binding can be computed")
        }
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_Digest(der, der.count, &output, &length, algorithm, nil) == 1 else {
            throw AuthError("hashing the server certificate for the TLS channel binding failed")
        }
        return Array(output.prefix(Int(length)))
    }
}
