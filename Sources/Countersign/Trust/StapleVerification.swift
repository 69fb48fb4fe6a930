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
        // Only a chain the verify callback trusted gets here.
        guard label.decision?.isTrusted == true else { return 1 }
        var bytes: UnsafePointer<UInt8>?
        let length = cs_SSL_get_tlsext_status_ocsp_resp(ssl, &bytes)
        let response = bytes.flatMap { length > 0 ? Array(UnsafeBufferPointer(start: $0, count: length)) : nil }
        let check = StapleCheck(mode: label.policy.settings.ocspStapling)
        let chain = label.verifiedCertificates
        label.verifiedCertificates = []
        guard let refusal = check.judge(response: response, chain: chain, at: UTCTimestamp.now()).refusal else {
            return 1
        }
        label.decision = .refused(refusal)
        return 0
    }
}
