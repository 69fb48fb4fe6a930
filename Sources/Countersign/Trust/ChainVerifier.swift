import COpenSSL
import CountersignSupport

/// Verifies a served chain against one trust store with OpenSSL's path builder and turns
/// the outcome into a `ChainResult` whose failure names what a person should look at.
enum ChainVerifier {
    /// `served` is the peer chain as sent, leaf first. `time` overrides "now" (tests).
    /// `backtrack`: when OpenSSL's path fails, try the other paths through the served certificates.
    static func verify(_ served: [Certificate], against trustStore: TrustStore, at time: Int64? = nil,
                       backtrack: Bool = true) -> ChainResult {
        build(served, against: trustStore, at: time, backtrack: backtrack).result
    }

    /// The outcome together with the built path's certificates (leaf first, anchor last;
    /// empty when it failed): revocation needs each issuer's key, not only its summary.
    static func build(_ served: [Certificate], against trustStore: TrustStore, at time: Int64? = nil,
                      backtrack: Bool = true) -> (result: ChainResult, path: [Certificate]) {
        guard let leaf = served.first else {
            return (.failed(ChainFailure(kind: .noCertificate, details: "the server sent no certificate")), [])
        }
        guard let context = X509_STORE_CTX_new(), let untrusted = cs_sk_X509_new_null() else {
            return (.failed(ChainFailure(kind: .invalidChain, details: "out of memory while verifying the chain")), [])
        }
        defer {
            X509_STORE_CTX_free(context)
            cs_sk_X509_free(untrusted)
        }
        for certificate in served.dropFirst() {
            _ = cs_sk_X509_push(untrusted, certificate.x509)
        }
        guard X509_STORE_CTX_init(context, trustStore.store, leaf.x509, untrusted) == 1 else {
            return (.failed(ChainFailure(kind: .invalidChain, details: "cannot start chain verification")), [])
        }
        _ = X509_STORE_CTX_set_default(context, "ssl_server")
        X509_STORE_CTX_set_verify_cb(context, InclusiveNotAfter.callback)
        if let time {
            X509_STORE_CTX_set_time(context, 0, time_t(time))
        }
        let verified = X509_verify_cert(context) == 1
        defer { OpenSSLErrorQueue.clear() }
        if verified {
            let path = builtChain(context)
            return (.verified(chain: path.map(CertificateSummary.init)), path)
        }
        let failed = ChainResult.failed(failure(context, leaf: leaf, storeLabel: trustStore.label))
        guard backtrack else { return (failed, []) }
        for path in AlternatePaths.candidates(served) {
            let alternative = build(path, against: trustStore, at: time, backtrack: false)
            if case .verified = alternative.result { return alternative }
        }
        return (failed, [])
    }

    private static func builtChain(_ context: OpaquePointer) -> [Certificate] {
        guard let chain = X509_STORE_CTX_get0_chain(context) else { return [] }
        return (0..<cs_sk_X509_num(chain)).compactMap { index in
            cs_sk_X509_value(chain, index).flatMap { try? Certificate(retaining: $0) }
        }
    }

    private static func failure(_ context: OpaquePointer, leaf: Certificate, storeLabel: String) -> ChainFailure {
        let error = X509_STORE_CTX_get_error(context)
        let depth = X509_STORE_CTX_get_error_depth(context)
        let current = X509_STORE_CTX_get_current_cert(context).flatMap { try? Certificate(retaining: $0) } ?? leaf
        let which = depth == 0 ? "certificate" : "certificate \(current.subject)"
        switch error {
        case X509_V_ERR_CERT_HAS_EXPIRED:
            return ChainFailure(kind: .expired, details: "\(which) expired on \(UTCTimestamp.string(current.notAfter))")
        case X509_V_ERR_CERT_NOT_YET_VALID:
            return ChainFailure(kind: .notYetValid,
                                details: "\(which) is not valid before \(UTCTimestamp.string(current.notBefore))")
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
            return ChainFailure(kind: .selfSigned,
                                details: "self-signed certificate: \(current.subject) is not among the \(storeLabel)")
        case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
            return ChainFailure(kind: .untrustedIssuer,
                                details: "untrusted issuer: \(current.subject) (a root not among the \(storeLabel))")
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
             X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
            return ChainFailure(kind: .untrustedIssuer,
                                details: "untrusted issuer: \(current.issuer) (not among the \(storeLabel))")
        default:
            let reason = X509_verify_cert_error_string(Int(error)).map { String(cString: $0) } ?? "error \(error)"
            return ChainFailure(kind: .invalidChain, details: "invalid chain at \(which): \(reason)")
        }
    }
}
