import COpenSSL

/// RFC 5280 4.1.2.5: a certificate is valid "through" its notAfter time, that second
/// included; OpenSSL counts the notAfter second itself as expired. This verify callback lets
/// exactly that second pass and leaves every other verdict to OpenSSL.
enum InclusiveNotAfter {
    static let callback: @convention(c) (Int32, OpaquePointer?) -> Int32 = { ok, context in
        guard ok == 0, let context, X509_STORE_CTX_get_error(context) == X509_V_ERR_CERT_HAS_EXPIRED,
              let certificate = X509_STORE_CTX_get_current_cert(context),
              let notAfter = try? X509Text.seconds(X509_get0_notAfter(certificate), field: "notAfter") else {
            return ok
        }
        let parameters = X509_STORE_CTX_get0_param(context)
        let now: Int64
        if let parameters, X509_VERIFY_PARAM_get_flags(parameters) & UInt(X509_V_FLAG_USE_CHECK_TIME) != 0 {
            now = Int64(X509_VERIFY_PARAM_get_time(parameters))
        } else {
            now = Int64(time(nil))
        }
        guard notAfter == now else { return ok }
        X509_STORE_CTX_set_error(context, X509_V_OK)
        return 1
    }
}
