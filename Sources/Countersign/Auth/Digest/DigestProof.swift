import COpenSSL
import CountersignHTTP

/// The values a Digest response is computed from; kept to check the server's `rspauth`. An
/// object: it goes from the answer to the exchange's record of it and back to the check.
///
/// KD's input up to H(A2) (H(A1) ":" nonce [":" nc ":" cnonce ":" qop] ":") is the same for the
/// request's `response` and the server's `rspauth`, so it is hashed once, when the answer is
/// made, and each of the two continues from a copy of that state (`digest_kd.c`). The state
/// holds what H(A1) (password-equivalent for this realm) hashed to: never printed.
final class DigestProof: @unchecked Sendable, CustomStringConvertible {
    let algorithm: DigestAlgorithm
    /// Written only here, in `init`; read (copied) by each response after.
    private let kd: OpaquePointer
    let nc: String?
    let cnonce: String?
    let qop: String?
    let uri: String
    let bodyHash: String?

    init(algorithm: DigestAlgorithm, ha1: [UInt8], nonce: String, nc: String?, cnonce: String?, qop: String?, uri: String, bodyHash: String?) {
        self.algorithm = algorithm
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
        self.nc = nc
        self.cnonce = cnonce
        self.qop = qop
        self.uri = uri
        self.bodyHash = bodyHash
        // Joined on the stack and hashed in one call.
        let parts = qop != nil && nc != nil ? [nonce, nc ?? "", cnonce ?? "", qop ?? ""] : [nonce]
        let length = parts.reduce(ha1.count + 1) { $0 + $1.utf8.count + 1 }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { prefix in
            var end = prefix.initialize(fromContentsOf: ha1)
            for part in parts {
                prefix[end] = UInt8(ascii: ":")
                end = UnsafeMutableBufferPointer(rebasing: prefix[(end + 1)...]).initialize(fromContentsOf: part.utf8) + end + 1
            }
            prefix[end] = UInt8(ascii: ":")
            cs_digest_kd_update(kd, prefix.baseAddress, end + 1)
        }
    }

    deinit { cs_digest_kd_free(kd) }

    var description: String { "Digest proof (\(algorithm), qop \(qop ?? "none"))" }

    /// The response hash in hex, KD(H(A1), nonce:nc:cnonce:qop:H(A2)), lent to `body` from the
    /// stack. For the request the method is the request's; for `rspauth` it is empty (RFC 7616 §3.5).
    func withResponse<Result>(method: String, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        var method = method, uri = uri, bodyHash = bodyHash ?? ""
        let withBody: Int32 = qop == "auth-int" ? 1 : 0
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * Int(EVP_MAX_MD_SIZE)) { hex in
            let count = method.withUTF8 { method in
                uri.withUTF8 { uri in
                    bodyHash.withUTF8 { bodyHash in
                        cs_digest_kd_response_hex(kd, method.baseAddress, method.count, uri.baseAddress, uri.count,
                                                  bodyHash.baseAddress, bodyHash.count, withBody, hex.baseAddress)
                    }
                }
            }
            precondition(count > 0, "OpenSSL could not compute a \(algorithm.hash.openSSLName) digest")
            return body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(hex)[..<count]))
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
        return withResponse(method: "") { expected in
            rspauth.withUnsafeBufferPointer { given in
                given.count == expected.count && zip(given, expected).allSatisfy { ASCIICase.lower($0) == $1 }
            }
        }
    }
}
