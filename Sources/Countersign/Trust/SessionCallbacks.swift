import COpenSSL

/// Ties OpenSSL's new-session callback to a context's `TLSSessionCache` and each `SSL*` to its
/// `ConnectionLabel`, through private ex-data slots whose free callbacks release the Swift
/// objects exactly when OpenSSL frees the C object (an `SSL*` may outlive the Swift context).
enum SessionCallbacks {
    private static let contextSlot: Int32 =
        CRYPTO_get_ex_new_index(CRYPTO_EX_INDEX_SSL_CTX, 0, nil, nil, nil) { _, pointer, _, _, _, _ in
            if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
        }
    private static let connectionSlot: Int32 =
        CRYPTO_get_ex_new_index(CRYPTO_EX_INDEX_SSL, 0, nil, nil, nil) { _, pointer, _, _, _, _ in
            if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
        }

    /// Called by OpenSSL with a new session; the cache keeps a copy, so 0: OpenSSL's reference
    /// stays OpenSSL's. Only a connection whose server the policy trusted leaves a session to resume.
    private static let newSession: @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32 = { ssl, session in
        guard let ssl, let session, let label = SessionCallbacks.label(of: ssl),
              HandshakeVerification.decision(of: ssl).isTrusted,
              let context = SSL_get_SSL_CTX(ssl),
              let raw = SSL_CTX_get_ex_data(context, SessionCallbacks.contextSlot) else { return 0 }
        let cache = Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue() as! TLSSessionCache
        cache.store(copyOf: session, for: label.cacheKey)
        return 0
    }

    static func attach(_ cache: TLSSessionCache, to context: OpaquePointer) {
        let retained = Unmanaged.passRetained(cache as AnyObject).toOpaque()
        _ = SSL_CTX_set_ex_data(context, contextSlot, retained)
        SSL_CTX_sess_set_new_cb(context, newSession)
    }

    static func label(_ ssl: OpaquePointer, _ label: ConnectionLabel) {
        let retained = Unmanaged.passRetained(label as AnyObject).toOpaque()
        _ = SSL_set_ex_data(ssl, connectionSlot, retained)
    }

    static func label(of ssl: OpaquePointer) -> ConnectionLabel? {
        guard let raw = SSL_get_ex_data(ssl, connectionSlot) else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue() as? ConnectionLabel
    }
}
