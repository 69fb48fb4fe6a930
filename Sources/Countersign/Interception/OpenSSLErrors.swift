import CEventSSL

/// Reads and empties the calling thread's OpenSSL error queue.
enum OpenSSLErrors {
    /// libssl registers its reason strings only once it is initialised; a failure may be
    /// described before any SSL object exists (e.g. from codes handed over by libevent).
    private static let stringsLoaded: Void = {
        OPENSSL_init_ssl(UInt64(OPENSSL_INIT_LOAD_SSL_STRINGS | OPENSSL_INIT_LOAD_CRYPTO_STRINGS), nil)
    }()

    static func drainCodes() -> [UInt] {
        var codes: [UInt] = []
        while case let code = ERR_get_error(), code != 0 {
            codes.append(code)
        }
        return codes
    }

    static func drainReasons() -> [String] {
        var reasons: [String] = []
        for code in drainCodes() {
            let text = reasonText(code)
            if !reasons.contains(text) { reasons.append(text) }
        }
        return reasons
    }

    static func reasonText(_ code: UInt) -> String {
        _ = stringsLoaded
        return ERR_reason_error_string(code).map { String(cString: $0) } ?? "OpenSSL error \(code)"
    }
}
