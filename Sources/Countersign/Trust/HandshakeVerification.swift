import COpenSSL

/// Trust decided inside the TLS handshake (SPEC "Trust evaluation"): OpenSSL hands the
/// server's Certificate message to `verify` before our client certificate or any request
/// byte goes out, and a refusal ends the handshake with an alert. The decision stays on the
/// connection's `ConnectionLabel`, so the failure path can name why.
enum HandshakeVerification {
    /// Every `SSL*` made from `context` is verified by its label's policy.
    static func install(on context: OpaquePointer) {
        // VERIFY_PEER: without it OpenSSL would carry on after the callback refuses.
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        SSL_CTX_set_cert_verify_callback(context, verify, nil)
    }

    /// The decision of a finished handshake. A resumed session runs no callback: the chain
    /// stored with it (verified when the session was made) is evaluated again by the same
    /// function, so expiry, reloads and pins apply to resumptions too. nil: no label.
    static func decision(of ssl: OpaquePointer, at time: Int64? = nil) -> TrustDecision {
        guard let label = SessionCallbacks.label(of: ssl) else {
            return .refused(TrustRefusal(kind: .invalidChain, details: "the connection was not made for a trust policy"))
        }
        if let decision = label.decision { return decision }
        let decision = label.record(label.policy.assess(served: PeerChain.certificates(ssl), serverName: label.serverName, at: time))
        label.verifiedCertificates = []  // a resumed handshake carries no staple to check them against
        return decision
    }

    /// The verified path of a trusted connection (what its pins were matched against).
    static func verifiedPath(of ssl: OpaquePointer) -> [CertificateSummary] {
        SessionCallbacks.label(of: ssl)?.verifiedPath ?? []
    }

    /// Why the verify callback refused this connection's server, if it did.
    static func refusal(of ssl: OpaquePointer) -> TrustRefusal? {
        SessionCallbacks.label(of: ssl)?.decision?.refusal
    }

    private static let verify: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { store, _ in
        guard let store else { return 0 }
        guard let raw = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()),
              let label = SessionCallbacks.label(of: OpaquePointer(raw)) else {
            X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION)
            return 0
        }
        let decision = label.record(label.policy.assess(served: served(store), serverName: label.serverName))
        X509_STORE_CTX_set_error(store, verifyError(decision))
        return decision.isTrusted ? 1 : 0
    }

    /// The chain as the server sent it, leaf first (OpenSSL passes the whole Certificate
    /// message as the untrusted stack; the leaf is prepended in case a version does not).
    private static func served(_ store: OpaquePointer) -> [Certificate] {
        var served: [Certificate] = []
        if let stack = X509_STORE_CTX_get0_untrusted(store) {
            served = (0..<cs_sk_X509_num(stack)).compactMap { index in
                cs_sk_X509_value(stack, index).flatMap { try? Certificate(retaining: $0) }
            }
        }
        if let leaf = X509_STORE_CTX_get0_cert(store).flatMap({ try? Certificate(retaining: $0) }), served.first != leaf {
            served.insert(leaf, at: 0)
        }
        return served
    }

    /// The verification error OpenSSL turns into the alert the server receives.
    private static func verifyError(_ decision: TrustDecision) -> Int32 {
        switch decision.refusal?.kind {
        case nil: return X509_V_OK
        case .expired?: return X509_V_ERR_CERT_HAS_EXPIRED
        case .notYetValid?: return X509_V_ERR_CERT_NOT_YET_VALID
        case .untrustedIssuer?: return X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
        case .selfSigned?: return X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
        case .nameMismatch?: return X509_V_ERR_HOSTNAME_MISMATCH
        case .revoked?: return X509_V_ERR_CERT_REVOKED
        case .revocationUnknown?: return X509_V_ERR_UNABLE_TO_GET_CRL
        default: return X509_V_ERR_APPLICATION_VERIFICATION
        }
    }
}
