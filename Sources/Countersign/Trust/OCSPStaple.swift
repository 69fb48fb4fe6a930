import COpenSSL
import CountersignSupport

/// What a stapled OCSP response (RFC 6960, RFC 6066 §8) says about the leaf, once verified:
/// a fact the `StapleCheck` decides over.
public enum StapleFinding: Sendable, Equatable {
    /// The server sent none (or was not asked).
    case absent
    case good
    case revoked(RevokedEntry)
    /// The responder does not know the certificate: no positive answer.
    case unknown
    /// The staple cannot be believed: why, in a sentence.
    case invalid(String)
}

/// Verifies a DER OCSP response for `leaf` issued by `issuer` (the first two certificates of
/// the verified path): a successful response, signed by the issuer itself or by a responder
/// the issuer certified for id-kp-OCSPSigning, with a SingleResponse whose CertID names this
/// leaf and issuer, current (thisUpdate/nextUpdate within `RevocationLookup.clockSkew`).
enum OCSPStaple {
    static func examine(_ der: [UInt8], leaf: Certificate, issuer: Certificate, at now: Int64) -> StapleFinding {
        defer { OpenSSLErrorQueue.clear() }
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_OCSP_RESPONSE(nil, &cursor, buffer.count)
        }
        guard let response = parsed else { return .invalid("the stapled OCSP response does not parse") }
        defer { OCSP_RESPONSE_free(response) }
        let status = OCSP_response_status(response)
        guard status == OCSP_RESPONSE_STATUS_SUCCESSFUL else {
            let text = OCSP_response_status_str(Int(status)).map { String(cString: $0) } ?? "status \(status)"
            return .invalid("the stapled OCSP response is not successful (\(text))")
        }
        guard let basic = OCSP_response_get1_basic(response) else {
            return .invalid("the stapled OCSP response is not a basic response")
        }
        defer { OCSP_BASICRESP_free(basic) }
        if let problem = signerProblem(basic, issuer: issuer, at: now) { return .invalid(problem) }
        guard let single = singleResponse(basic, leaf: leaf, issuer: issuer) else {
            return .invalid("the stapled OCSP response is for another certificate (no CertID matches \(leaf.subject), serial"
                + " \(RevocationLookup.serialHex(leaf)), issued by \(issuer.subject))")
        }
        return judge(single, at: now)
    }

    /// nil when the response's signature verifies with a key the issuer stands behind: its own,
    /// or a delegated responder's it certified for id-kp-OCSPSigning (RFC 6960 §4.2.2.2).
    private static func signerProblem(_ basic: OpaquePointer, issuer: Certificate, at now: Int64) -> String? {
        if isSigned(basic, byOnly: issuer) { return nil }
        var found: OpaquePointer?
        guard OCSP_resp_get0_signer(basic, &found, nil) == 1, let found,
              let signer = try? Certificate(retaining: found), signer != issuer else {
            return "the stapled OCSP response is not signed by the issuer \(issuer.subject) nor by a responder it certified"
        }
        // OCSP_NOVERIFY: the signature with the included signer's key only; who may sign is decided here.
        guard OCSP_basic_verify(basic, nil, nil, UInt(OCSP_NOVERIFY)) > 0 else {
            return "the stapled OCSP response's signature does not verify with the key of its signer \(signer.subject)"
        }
        let certifiedByIssuer = X509_check_issued(issuer.x509, signer.x509) == X509_V_OK
            && X509_get0_pubkey(issuer.x509).map { X509_verify(signer.x509, $0) == 1 } == true
        guard certifiedByIssuer else {
            return "the stapled OCSP response is signed by a certificate for \(signer.subject) that is neither the issuer's own"
                + " nor one the issuer \(issuer.subject) certified"
        }
        let ocspSigning = (X509_get_extension_flags(signer.x509) & UInt32(EXFLAG_XKUSAGE)) != 0
            && (X509_get_extended_key_usage(signer.x509) & UInt32(XKU_OCSP_SIGN)) != 0
        guard ocspSigning else {
            return "the stapled OCSP response is signed by \(signer.subject), certified by the issuer but not for OCSP signing"
                + " (its extendedKeyUsage lacks OCSPSigning)"
        }
        guard signer.notBefore <= now + RevocationLookup.clockSkew, now <= signer.notAfter + RevocationLookup.clockSkew else {
            return "the stapled OCSP response's signer \(signer.subject) is outside its validity"
        }
        return nil
    }

    /// Whether the issuer's own key signed the response (looked up by the responder ID among
    /// the issuer alone, never among certificates the response carries).
    private static func isSigned(_ basic: OpaquePointer, byOnly issuer: Certificate) -> Bool {
        guard let only = cs_sk_X509_new_null() else { return false }
        defer { cs_sk_X509_free(only) }
        _ = cs_sk_X509_push(only, issuer.x509)
        return OCSP_basic_verify(basic, only, nil, UInt(OCSP_NOVERIFY | OCSP_NOINTERN)) > 0
    }

    /// The SingleResponse whose CertID (SHA-1, as RFC 6960 responders use, or SHA-256) names
    /// the leaf's serial under the issuer's name and key.
    private static func singleResponse(_ basic: OpaquePointer, leaf: Certificate, issuer: Certificate) -> OpaquePointer? {
        for digest in [EVP_sha1(), EVP_sha256()] {
            guard let id = OCSP_cert_to_id(digest, leaf.x509, issuer.x509) else { continue }
            defer { OCSP_CERTID_free(id) }
            let index = OCSP_resp_find(basic, id, -1)
            if index >= 0 { return OCSP_resp_get0(basic, index) }
        }
        return nil
    }

    private static func judge(_ single: OpaquePointer, at now: Int64) -> StapleFinding {
        var reason: Int32 = -1
        var revokedAt: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var thisUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var nextUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        let status = OCSP_single_get0_status(single, &reason, &revokedAt, &thisUpdate, &nextUpdate)
        let seconds = { (time: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?) in
            time.flatMap { try? X509Text.seconds(UnsafePointer($0), field: "OCSP time") }
        }
        if status == V_OCSP_CERTSTATUS_REVOKED {
            // A revocation is final: believed even from a response that is no longer current.
            return .revoked(RevokedEntry(revocationDate: seconds(revokedAt) ?? 0,
                                         reason: reason >= 0 ? RevokedEntry.reasonName(Int(reason)) : nil))
        }
        guard let produced = seconds(thisUpdate) else { return .invalid("the stapled OCSP response has no readable thisUpdate") }
        if produced > now + RevocationLookup.clockSkew {
            return .invalid("the stapled OCSP response is not valid before \(UTCTimestamp.string(produced)) (its thisUpdate)")
        }
        guard let expires = seconds(nextUpdate) else {
            return .invalid("the stapled OCSP response has no nextUpdate, so it is never current")
        }
        if expires + RevocationLookup.clockSkew < now {
            return .invalid("the stapled OCSP response expired: its nextUpdate was \(UTCTimestamp.string(expires))")
        }
        return status == V_OCSP_CERTSTATUS_GOOD ? .good : .unknown
    }
}
