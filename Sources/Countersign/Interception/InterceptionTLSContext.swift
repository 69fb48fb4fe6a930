import COpenSSL
import CountersignTrust

/// The TLS server side of interception: one SSL_CTX for the process, and per connection an
/// SSL that presents the minted leaf for the host the client asked for, chained to the CA.
public final class InterceptionTLSContext: @unchecked Sendable {
    // The SSL_CTX is configured once here and only read afterwards (OpenSSL allows SSL_new
    // from many threads on a shared context).
    public let minter: LeafMinter
    /// The SSL_CTX*, for callers that need it (e.g. to hand to bufferevent_openssl).
    public let sslContext: OpaquePointer
    private let chain: OpaquePointer
    /// How many sessions are kept for resumption (the oldest makes room for a new one): ~1.2 KiB
    /// each, so some 4 MiB at most (Squid's ssl-bump session cache is 2 MB by default).
    static let sessionCacheSize = 3_500

    /// TLS 1.2 and 1.3 only; ALPN answers "h2" (where allowed), "http/1.1" or nothing; buffers released while
    /// idle; one session ticket per connection to a client that can resume with it, naming a session kept
    /// here, so returning clients skip the full handshake.
    public init(minter: LeafMinter) throws {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw InterceptionError.withOpenSSLReason("cannot create the TLS context for interception")
        }
        guard let chain = cs_sk_X509_new_null() else {
            SSL_CTX_free(context)
            throw InterceptionError("cannot allocate the certificate chain: out of memory")
        }
        X509_up_ref(minter.ca.certificate.x509)
        _ = cs_sk_X509_push(chain, minter.ca.certificate.x509)
        self.minter = minter
        self.sslContext = context
        self.chain = chain
        guard cs_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1,
              cs_SSL_CTX_set_max_proto_version(context, TLS1_3_VERSION) == 1 else {
            throw InterceptionError.withOpenSSLReason("cannot limit interception to TLS 1.2 and 1.3")
        }
        _ = cs_SSL_CTX_set_mode(context, Int(SSL_MODE_RELEASE_BUFFERS))
        // OpenSSL's write buffer holds one whole record while the peer is not reading: 4 KiB
        // records keep that at 4.3 KiB instead of 16.6 KiB per connection.
        _ = cs_SSL_CTX_set_max_send_fragment(context, 4096)
        // One read per record (or several) instead of one for its header and one for the rest.
        _ = SSL_CTX_ctrl(context, SSL_CTRL_SET_READ_AHEAD, 1, nil)
        // Our order of TLS 1.3 suites decides, unless the client asks for ChaCha20 first.
        guard SSL_CTX_set_ciphersuites(context, TLS13Suites.preferred) == 1 else {
            throw InterceptionError.withOpenSSLReason("cannot set the TLS 1.3 cipher suites")
        }
        _ = SSL_CTX_set_options(context, cs_SSL_OP_CIPHER_SERVER_PREFERENCE() | cs_SSL_OP_PRIORITIZE_CHACHA())
        // Client-initiated renegotiation only serves to burn server CPU.
        _ = SSL_CTX_set_options(context, cs_SSL_OP_NO_RENEGOTIATION())
        // A client that closes its socket with no close_notify (Python's, Go's and many pools do,
        // on an idle connection) has left; nothing it sends is delimited by the close, so this
        // is no truncation. OpenSSL 3 would call it a fatal error and drop the client's session
        // from the cache, costing its next connection a full handshake: read it as an end.
        _ = SSL_CTX_set_options(context, cs_SSL_OP_IGNORE_UNEXPECTED_EOF())
        // Stateful resumption: a TLS 1.3 ticket names a session kept here (a TLS 1.2 client
        // resumes by session ID), so no ticket is encoded and encrypted per connection. The
        // cache is bounded (see `sessionCacheSize`).
        _ = SSL_CTX_set_options(context, cs_SSL_OP_NO_TICKET())
        _ = SSL_CTX_ctrl(context, SSL_CTRL_SET_SESS_CACHE_SIZE, Self.sessionCacheSize, nil)
        // One TLS 1.3 ticket per connection, not OpenSSL's two: each costs a write of its own,
        // and a returning client resumes with one.
        _ = SSL_CTX_set_num_tickets(context, 1)
        // None for a TLS 1.3 client that could not resume with it (RFC 8446 4.2.9: servers SHOULD
        // NOT send tickets a client's PSK modes do not allow), as Go's TLS without a session cache,
        // which lists no mode: its ticket would be a session kept for nothing and a write of its own.
        SSL_CTX_set_client_hello_cb(context, { ssl, _, _ in
            if let ssl, !InterceptionTLSContext.offersResumption(ssl) { _ = SSL_set_num_tickets(ssl, 0) }
            return SSL_CLIENT_HELLO_SUCCESS
        }, nil)
        let sessionContext = Array("countersign-interception".utf8)
        _ = SSL_CTX_set_session_id_context(context, sessionContext, UInt32(sessionContext.count))
        SSL_CTX_set_alpn_select_cb(context, { ssl, output, outputLength, input, inputLength, _ in
            guard let output, let outputLength, let input else { return SSL_TLSEXT_ERR_NOACK }
            let offered = UnsafeBufferPointer(start: input, count: Int(inputLength))
            guard let range = ALPNSelection.choice(inClientList: offered, allowH2: ALPNSelection.allowsH2(ssl)) else { return SSL_TLSEXT_ERR_NOACK }
            // Points into the client's list, which OpenSSL keeps alive for the handshake.
            output.pointee = input + range.lowerBound
            outputLength.pointee = UInt8(range.count)
            return SSL_TLSEXT_ERR_OK
        }, nil)
    }

    /// Whether the ClientHello's psk_key_exchange_modes lists psk_dhe_ke, the one mode this server
    /// resumes with (plain psk_ke would give up forward secrecy: OpenSSL refuses it by default).
    static func offersResumption(_ ssl: OpaquePointer) -> Bool {
        var extensionData: UnsafePointer<UInt8>?
        var length = 0
        guard SSL_client_hello_get0_ext(ssl, UInt32(TLSEXT_TYPE_psk_kex_modes), &extensionData, &length) == 1,
              let extensionData, length > 0 else { return false }
        // A one-octet length, then one octet per mode.
        let modes = UnsafeBufferPointer(start: extensionData + 1, count: min(Int(extensionData[0]), length - 1))
        return modes.contains(pskDHEKeyExchange)
    }

    private static let pskDHEKeyExchange: UInt8 = 1

    deinit {
        cs_sk_X509_pop_free(chain)
        SSL_CTX_free(sslContext)
    }

    /// A new SSL* in accept state presenting the leaf for `host` and the CA as its chain,
    /// choosing `h2` by ALPN when `offerH2` and the client offers it.
    /// The caller owns it (SSL_free, or hand it to a bufferevent that frees it).
    public func makeServerSSL(for host: String, offerH2: Bool = false) throws -> OpaquePointer {
        let leaf = try minter.leaf(for: host)
        ERR_clear_error()
        guard let ssl = SSL_new(sslContext) else {
            throw InterceptionError.withOpenSSLReason("cannot create a TLS session for \(leaf.host)")
        }
        guard SSL_use_cert_and_key(ssl, leaf.certificate.x509, leaf.privateKey.evpKey, chain, 1) == 1 else {
            SSL_free(ssl)
            throw InterceptionError.withOpenSSLReason("cannot install the minted certificate for \(leaf.host)")
        }
        if offerH2 { ALPNSelection.allowH2(on: ssl) }
        SSL_set_accept_state(ssl)
        return ssl
    }
}
