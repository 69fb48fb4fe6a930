import COpenSSL

/// KD's input as far as it stays the same for every answer with one nonce: H(A1) ":" nonce ":"
/// absorbed once (`digest_kd.c`), which each answer continues from a copy of (`answer`).
/// Kept in the session while its nonce and credential stay (not for the `-sess` algorithms,
/// whose H(A1) takes each answer's cnonce). The state is what H(A1) (password-equivalent for
/// the realm) hashed to: wiped when freed, never printed.
final class DigestNoncePrefix: @unchecked Sendable, CustomStringConvertible, CustomReflectable {
    let algorithm: DigestAlgorithm
    let nonce: String
    /// The H(A1) absorbed, to tell whether a later answer's is the same (the prepared
    /// credential's own value, shared, not copied).
    private let ha1: [UInt8]
    /// Written only in `init`; read (copied) by each proof after.
    let kd: OpaquePointer

    init(algorithm: DigestAlgorithm, ha1: [UInt8], nonce: String) {
        self.algorithm = algorithm
        self.nonce = nonce
        self.ha1 = ha1
        let kind: Int32
        switch algorithm.hash {
        case .md5: kind = Int32(CS_KD_MD5)
        case .sha256: kind = Int32(CS_KD_SHA256)
        case .md4, .sha512_256: kind = Int32(CS_KD_EVP)
        }
        guard let kd = cs_digest_kd_new(kind, MessageDigest.algorithm(algorithm.hash)) else {
            preconditionFailure("OpenSSL could not start a \(algorithm.hash.openSSLName) digest (out of memory)")
        }
        self.kd = kd
        DigestHex.withColonJoined(ha1[...], ArraySlice(nonce.utf8)) { cs_digest_kd_update(kd, $0.baseAddress, $0.count) }
    }

    deinit { cs_digest_kd_free(kd) }

    /// Whether answers with `nonce` and this H(A1) continue from this prefix.
    func isFor(ha1: [UInt8], nonce: String) -> Bool { self.nonce == nonce && self.ha1 == ha1 }

    /// hex(H(method ":" uri [":" bodyHash])): H(A2) (RFC 7616 §3.4.3).
    func a2(method: String, uri: String, bodyHash: String?) -> DigestHex {
        var method = method, uri = uri, body = bodyHash ?? ""
        return DigestHex { out in
            method.withUTF8 { method in
                uri.withUTF8 { uri in
                    body.withUTF8 { body in
                        cs_digest_kd_a2_hex(kd, method.baseAddress, method.count, uri.baseAddress, uri.count, body.baseAddress, body.count,
                                            bodyHash == nil ? 0 : 1, out)
                    }
                }
            }
        }
    }

    /// An answer's `response` over `a2` and the `rspauth` the server must send back over
    /// `rspauthA2`, both KD(H(A1), nonce ":" middle H(A2)), where `middle` is nc ":" cnonce ":"
    /// qop ":" (empty without qop): the two continue from one copy of this prefix (`digest_kd.c`).
    func answer(middle: UnsafeBufferPointer<UInt8>, a2: DigestHex, rspauthA2: DigestHex) -> (response: DigestHex, rspauth: DigestHex) {
        a2.withBytes { a2 in
            rspauthA2.withBytes { rspauthA2 in
                DigestHex.pair { response, rspauth in
                    cs_digest_kd_answer_hex(kd, middle.baseAddress, middle.count, a2.baseAddress?.assumingMemoryBound(to: UInt8.self), a2.count,
                                            rspauthA2.baseAddress?.assumingMemoryBound(to: UInt8.self), rspauthA2.count, response, rspauth)
                }
            }
        }
    }

    var description: String { "Digest nonce prefix (\(algorithm))" }
    /// No child: `dump` must not show the H(A1) it keeps.
    var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
}
