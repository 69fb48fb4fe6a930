import COpenSSL

/// HMAC-SHA256 under one fixed key, set up once: OpenSSL's one-shot `HMAC()` fetches the MAC
/// implementation and schedules the key on every call, which was most of an `hmac-sha256`
/// signature's cost. The template context is only ever read (duplicated) after `init`, so one
/// instance serves every worker thread.
public final class KeyedHMACSHA256: @unchecked Sendable {
    private let template: OpaquePointer

    public init?(key: [UInt8]) {
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { return nil }
        defer { EVP_MAC_free(mac) }
        guard let context = EVP_MAC_CTX_new(mac) else { return nil }
        let initialised = "digest".withCString { name in
            "SHA256".withCString { digest -> Bool in
                var parameters = [OSSL_PARAM_construct_utf8_string(name, UnsafeMutablePointer(mutating: digest), 0), OSSL_PARAM_construct_end()]
                return key.withUnsafeBufferPointer { EVP_MAC_init(context, $0.baseAddress, $0.count, &parameters) == 1 }
            }
        }
        guard initialised else {
            EVP_MAC_CTX_free(context)
            return nil
        }
        template = context
    }

    deinit { EVP_MAC_CTX_free(template) }

    public func authenticate(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        guard let context = EVP_MAC_CTX_dup(template) else { preconditionFailure("EVP_MAC_CTX_dup: out of memory") }
        defer { EVP_MAC_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: 32)
        var length = 0
        let done = EVP_MAC_update(context, message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count) == 1
            && EVP_MAC_final(context, &output, &length, output.count) == 1
        precondition(done && length == 32, "OpenSSL HMAC-SHA256 failed")
        return output
    }

    public func authenticate(_ message: [UInt8]) -> [UInt8] {
        message.withUnsafeBytes { authenticate($0) }
    }
}
