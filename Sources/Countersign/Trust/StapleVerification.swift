import COpenSSL

/// `ocsp_stapling` decided inside the handshake: OpenSSL hands the stapled OCSP response to
/// the status callback after the chain was judged by the verify callback and before the
/// handshake finishes, so a refused server still gets an alert (bad_certificate_status_response)
/// and never our client certificate's use or a request byte. The refusal replaces the
/// connection's decision, so the failure path names it like any other.
enum StapleVerification {
    static func install(on context: OpaquePointer) {
        _ = cs_SSL_CTX_set_tlsext_status_cb(context, callback)
    }

    private static let callback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { ssl, _ in
        guard let ssl, let label = SessionCallbacks.label(of: ssl) else { return 0 }
        // Only a chain the verify callback trusted gets here; without a path there is nothing to check.
        guard label.decision?.isTrusted == true, label.verifiedCertificates.count >= 2 else { return 1 }
        let leaf = label.verifiedCertificates[0], issuer = label.verifiedCertificates[1]
        var bytes: UnsafePointer<UInt8>?
        let length = cs_SSL_get_tlsext_status_ocsp_resp(ssl, &bytes)
        let finding: StapleFinding
        if let bytes, length > 0 {
            finding = OCSPStaple.examine(Array(UnsafeBufferPointer(start: bytes, count: length)), leaf: leaf, issuer: issuer,
                                         at: UTCTimestamp.now())
        } else {
            finding = .absent
        }
        let check = StapleCheck(mode: label.policy.settings.ocspStapling)
        guard let refusal = check.refusal(for: finding, leaf: leaf.subject, serial: RevocationLookup.serialHex(leaf)) else { return 1 }
        label.decision = .refused(refusal)
        return 0
    }
}
