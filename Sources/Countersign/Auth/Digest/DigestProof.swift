import COpenSSL
import CountersignHTTP

/// The values a Digest response is computed from; kept to check the server's `rspauth`. An
/// object: it goes from the answer to the exchange's record of it and back to the check.
///
/// KD's input up to H(A2) (H(A1) ":" nonce [":" nc ":" cnonce ":" qop] ":") is the same for the
/// request's `response` and the server's `rspauth`, so it is hashed once, when the answer is
/// made: from a copy of the session's `DigestNoncePrefix`, with this answer's count, cnonce and
/// qop; each of the two continues from a copy of that state (`digest_kd.c`). The state holds
/// what H(A1) (password-equivalent for this realm) hashed to: never printed.
final class DigestProof: @unchecked Sendable, CustomStringConvertible {
    let algorithm: DigestAlgorithm
    /// Written only here, in `init`; read (copied) by each response after.
    private let kd: OpaquePointer
    private let prefix: DigestNoncePrefix
    let nc: String?
    let cnonce: String?
    let qop: String?
    let uri: String
    let bodyHash: String?
    /// H(A2) of the server's `rspauth` (":" uri), when the session had it from an earlier answer.
    private let rspauthA2: DigestHex?

    init(prefix: DigestNoncePrefix, nc: String?, cnonce: String?, qop: String?, uri: String, bodyHash: String?, rspauthA2: DigestHex? = nil) {
        algorithm = prefix.algorithm
        guard let kd = cs_digest_kd_continuing(prefix.kd) else {
            preconditionFailure("OpenSSL could not copy a \(prefix.algorithm.hash.openSSLName) digest (out of memory)")
        }
        self.kd = kd
        self.prefix = prefix
        self.nc = nc
        self.cnonce = cnonce
        self.qop = qop
        self.uri = uri
        self.bodyHash = bodyHash
        self.rspauthA2 = rspauthA2
        if let qop, let nc {
            // nc ":" cnonce ":" qop ":", joined on the stack (a cnonce is 32 digits, a qop a token).
            DigestHex.withColonJoined(nc.utf8, (cnonce ?? "").utf8, qop.utf8) { cs_digest_kd_update(kd, $0.baseAddress, $0.count) }
        }
    }

    deinit { cs_digest_kd_free(kd) }

    var description: String { "Digest proof (\(algorithm), qop \(qop ?? "none"))" }

    /// H(A2) over `method` and this answer's uri (and body hash with auth-int).
    func a2(method: String) -> DigestHex {
        prefix.a2(method: method, uri: uri, bodyHash: qop == "auth-int" ? bodyHash ?? "" : nil)
    }

    /// The response hash in hex, KD(H(A1), nonce:nc:cnonce:qop:H(A2)), for the A2 given: the
    /// request's (its method), or `rspauth`'s (an empty method, RFC 7616 §3.5).
    func response(a2: DigestHex) -> DigestHex {
        a2.withBytes { a2 in
            DigestHex { cs_digest_kd_finish_hex(kd, a2.baseAddress?.assumingMemoryBound(to: UInt8.self), a2.count, $0) }
        }
    }

    /// Whether the server's `Authentication-Info` proves it knows the password too (RFC 7616
    /// §3.5): `rspauth` present and equal (in any case) to the response over an empty method,
    /// and `cnonce` and `nc`, when given, the ones sent. Values as received, so the check
    /// makes no string.
    func verifies(rspauth: ArraySlice<UInt8>?, cnonce: ArraySlice<UInt8>?, nc: ArraySlice<UInt8>?) -> Bool {
        func isSent(_ given: ArraySlice<UInt8>?, _ sent: String?) -> Bool {
            guard let given else { return true }
            guard var sent else { return false }
            return sent.withUTF8 { sent in
                given.withUnsafeBufferPointer { $0.count == sent.count && CRYPTO_memcmp($0.baseAddress, sent.baseAddress, sent.count) == 0 }
            }
        }
        guard let rspauth, isSent(cnonce, self.cnonce), isSent(nc, self.nc) else { return false }
        return response(a2: rspauthA2 ?? a2(method: "")).withBytes { expected in
            rspauth.withUnsafeBufferPointer { given in
                given.count == expected.count && zip(given, expected).allSatisfy { ASCIICase.lower($0) == $1 }
            }
        }
    }
}
