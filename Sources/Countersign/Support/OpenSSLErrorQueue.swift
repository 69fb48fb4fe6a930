import COpenSSL

/// Reads (and empties) the calling thread's OpenSSL error queue, or describes error codes
/// collected elsewhere (`bufferevent_get_openssl_error`).
public enum OpenSSLErrorQueue {
    /// One queued error: the packed code, its library and reason, and OpenSSL's reason text.
    public struct Entry: Equatable, Sendable {
        public let code: UInt
        public let library: Int32
        public let reason: Int32
        public let text: String

        public init(code: UInt) {
            self.code = code
            library = ERR_GET_LIB(code)
            reason = ERR_GET_REASON(code)
            text = OpenSSLErrorQueue.reasonText(code)
        }
    }

    /// libssl registers its reason strings only once it is initialised; a failure may be
    /// described before any SSL object exists (e.g. from codes handed over by libevent).
    private static let stringsLoaded: Void = {
        OPENSSL_init_ssl(UInt64(OPENSSL_INIT_LOAD_SSL_STRINGS | OPENSSL_INIT_LOAD_CRYPTO_STRINGS), nil)
    }()

    public static func drainCodes() -> [UInt] {
        var codes: [UInt] = []
        while case let code = ERR_get_error(), code != 0 {
            codes.append(code)
        }
        return codes
    }

    public static func drain() -> [Entry] {
        drainCodes().map(Entry.init(code:))
    }

    /// The distinct reason texts of the queued errors, in order; the queue is left empty.
    public static func drainReasons() -> [String] {
        reasons(of: drainCodes())
    }

    /// The distinct reason texts of these codes, in order.
    public static func reasons(of codes: [UInt]) -> [String] {
        var seen: [String] = []
        for code in codes {
            let text = reasonText(code)
            if !seen.contains(text) { seen.append(text) }
        }
        return seen
    }

    public static func reasonText(_ code: UInt) -> String {
        _ = stringsLoaded
        return ERR_reason_error_string(code).map { String(cString: $0) } ?? "OpenSSL error \(code)"
    }

    public static func clear() {
        ERR_clear_error()
    }
}
