import COpenSSL
import CountersignSupport

/// The client-side `SSL_CTX*` for one (trust policy, client identity) pair: TLS 1.2/1.3 from
/// the policy's minimum, ALPN http/1.1, the identity presented when the server asks, and a
/// per-context session cache so new connections resume. Every `SSL*` made here is judged by
/// the policy inside the handshake (`HandshakeVerification`): a refused server gets an
/// alert before it could see the identity; `evaluate(ssl:)` reads the decision.
public final class UpstreamTLSContext: @unchecked Sendable {
    /// The owned `SSL_CTX*`.
    public let context: OpaquePointer
    public let policy: TrustPolicy
    public let identity: ClientIdentity?
    let sessions: TLSSessionCache

    /// `offersH2`: ALPN offers `h2` before `http/1.1` (`hosts.*.http2`).
    public init(policy: TrustPolicy, identity: ClientIdentity? = nil, offersH2: Bool = false) throws {
        OpenSSLErrorQueue.clear()
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw TrustError.withOpenSSLReason("cannot create a TLS client context")
        }
        self.context = context
        self.policy = policy
        self.identity = identity
        sessions = TLSSessionCache()
        try configure(offersH2: offersH2)
    }

    private func configure(offersH2: Bool) throws {
        let minimum = policy.settings.minTLSVersion == .tls13 ? TLS1_3_VERSION : TLS1_2_VERSION
        guard cs_SSL_CTX_set_min_proto_version(context, minimum) == 1,
              cs_SSL_CTX_set_max_proto_version(context, TLS1_3_VERSION) == 1 else {
            throw TrustError.withOpenSSLReason("cannot restrict the TLS versions")
        }
        // Offered in our order (TLS13Suites); most servers take the client's.
        guard SSL_CTX_set_ciphersuites(context, TLS13Suites.preferred) == 1 else {
            throw TrustError.withOpenSSLReason("cannot set the TLS 1.3 cipher suites")
        }
        let alpn: [UInt8] = (offersH2 ? [2] + Array("h2".utf8) : []) + [8] + Array("http/1.1".utf8)
        guard SSL_CTX_set_alpn_protos(context, alpn, UInt32(alpn.count)) == 0 else {
            throw TrustError.withOpenSSLReason("cannot offer ALPN")
        }
        HandshakeVerification.install(on: context)
        if policy.settings.ocspStapling != .off {
            StapleVerification.install(on: context)
        }
        _ = cs_SSL_CTX_set_mode(context, Int(SSL_MODE_RELEASE_BUFFERS))
        // OpenSSL's write buffer holds one whole record while the peer is not reading: 4 KiB
        // records keep that at 4.3 KiB instead of 16.6 KiB per connection.
        _ = cs_SSL_CTX_set_max_send_fragment(context, 4096)
        // One read per record (or several) instead of one for its header and one for the rest.
        _ = SSL_CTX_ctrl(context, SSL_CTRL_SET_READ_AHEAD, 1, nil)
        _ = cs_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE))
        SessionCallbacks.attach(sessions, to: context)
        if let identity {
            try present(identity)
        }
    }

    private func present(_ identity: ClientIdentity) throws {
        guard SSL_CTX_use_certificate(context, identity.certificate.x509) == 1,
              SSL_CTX_use_PrivateKey(context, identity.privateKey.evpKey) == 1,
              SSL_CTX_check_private_key(context) == 1 else {
            throw TrustError.withOpenSSLReason("cannot use the client certificate \(identity.certificate.subject)")
        }
        for intermediate in identity.chain {
            guard cs_SSL_CTX_add1_chain_cert(context, intermediate.x509) == 1 else {
                throw TrustError.withOpenSSLReason("cannot add \(intermediate.subject) to the client certificate chain")
            }
        }
    }

    /// A new `SSL*` (owned by the caller, e.g. a bufferevent with BEV_OPT_CLOSE_ON_FREE) ready
    /// for `SSL_connect`: SNI set unless `serverName` is an IP literal (RFC 6066 §3), and the
    /// session cached under `cacheKey` ("host:port") offered for resumption.
    /// Narrows one connection's ALPN offer to `http/1.1` (a request that will upgrade).
    public static func offerOnlyHTTP11(on ssl: OpaquePointer) {
        let alpn: [UInt8] = [8] + Array("http/1.1".utf8)
        _ = SSL_set_alpn_protos(ssl, alpn, UInt32(alpn.count))
    }

    public func makeSSL(serverName: String, cacheKey: String) -> OpaquePointer {
        guard let ssl = SSL_new(context) else { preconditionFailure("SSL_new failed: out of memory") }
        if IPAddressText.parse(serverName) == nil {
            _ = cs_SSL_set_tlsext_host_name(ssl, serverName)
        }
        SessionCallbacks.label(ssl, ConnectionLabel(serverName: serverName, cacheKey: cacheKey, policy: policy))
        if policy.settings.ocspStapling != .off {
            _ = cs_SSL_set_tlsext_status_type(ssl, TLSEXT_STATUSTYPE_ocsp)
        }
        // "require": every handshake carries a current staple, and a resumed one carries none.
        if policy.settings.ocspStapling != .require, let session = sessions.session(for: cacheKey) {
            _ = SSL_set_session(ssl, session)
            SSL_SESSION_free(session)
        }
        return ssl
    }

    /// The certificates the server sent, leaf first (also after a resumed handshake).
    public func servedCertificates(ssl: OpaquePointer) -> [Certificate] {
        PeerChain.certificates(ssl)
    }

    /// The policy's decision on a finished handshake: the one made inside it, or for a
    /// resumed session its stored chain evaluated now (or at `time`). A refused
    /// connection's session is dropped so it cannot be resumed.
    public func evaluate(ssl: OpaquePointer, at time: Int64? = nil) -> TrustDecision {
        let decision = HandshakeVerification.decision(of: ssl, at: time)
        if !decision.isTrusted, let key = SessionCallbacks.label(of: ssl)?.cacheKey {
            sessions.remove(key)
        }
        return decision
    }

    /// Why the policy refused the server during a handshake that then failed; nil when the
    /// handshake failed for another reason.
    public func refusal(ssl: OpaquePointer) -> TrustRefusal? {
        guard let refusal = HandshakeVerification.refusal(of: ssl) else { return nil }
        if let key = SessionCallbacks.label(of: ssl)?.cacheKey { sessions.remove(key) }
        return refusal
    }

    /// The certificates the trust decision judged, leaf first: the chain built to the anchor,
    /// or with allow-invalid the signed served prefix. Empty before a decision.
    public func verifiedPath(ssl: OpaquePointer) -> [CertificateSummary] {
        HandshakeVerification.verifiedPath(of: ssl)
    }

    /// The served leaf, for `tls-server-end-point` channel binding and expiry metrics.
    public func servedLeaf(ssl: OpaquePointer) -> Certificate? {
        servedCertificates(ssl: ssl).first
    }

    /// A sentence for a failed `SSL_connect` (call right after it, on the same thread).
    public func handshakeFailure(ssl: OpaquePointer, result: Int32) -> String {
        if let refusal = refusal(ssl: ssl) {
            OpenSSLErrorQueue.clear()
            return refusal.details
        }
        return HandshakeFailure.describe(sslError: SSL_get_error(ssl, result),
                                  errors: OpenSSLErrorQueue.drain(),
                                  identityConfigured: identity != nil)
    }

    /// A sentence for a handshake that failed inside a bufferevent, from the error codes it
    /// collected (`bufferevent_get_openssl_error`).
    public func handshakeFailure(errorCodes: [UInt]) -> String {
        let entries = errorCodes.map(OpenSSLErrorQueue.Entry.init(code:))
        return HandshakeFailure.describe(sslError: entries.isEmpty ? SSL_ERROR_SYSCALL : SSL_ERROR_SSL,
                                         errors: entries, identityConfigured: identity != nil,
                                         minimumVersion: policy.settings.minTLSVersion == .tls13 ? "1.3" : "1.2")
    }

    /// Sessions currently cached (for tests and the status page).
    public var cachedSessionCount: Int { sessions.count }

    deinit {
        SSL_CTX_free(context)
    }
}

/// What `makeSSL` records on each `SSL*` for the callbacks and `evaluate`.
final class ConnectionLabel {
    let serverName: String
    let cacheKey: String
    /// Judges the server in the handshake (held here: an `SSL*` may outlive its context).
    let policy: TrustPolicy
    /// Set by the verify callback, or on first ask after a resumed handshake.
    var decision: TrustDecision?
    /// The path the decision judged (leaf first); shown on /status instead of whatever was served.
    var verifiedPath: [CertificateSummary] = []
    /// The same path's certificates, kept from the verify callback to the status callback
    /// (which checks the stapled OCSP response against them, then lets them go) only when the
    /// policy asks for a staple: otherwise a connection would hold them for its whole life.
    var verifiedCertificates: [Certificate] = []

    init(serverName: String, cacheKey: String, policy: TrustPolicy) {
        self.serverName = serverName
        self.cacheKey = cacheKey
        self.policy = policy
    }

    /// Keeps `assessment`'s decision and verified path; returns the decision.
    func record(_ assessment: TrustAssessment) -> TrustDecision {
        decision = assessment.decision
        verifiedPath = assessment.facts.verifiedPath(storeLabel: policy.chainStore?.label)
        if policy.settings.ocspStapling != .off { verifiedCertificates = assessment.facts.verifiedChain }
        return assessment.decision
    }
}

/// The served chain of a finished handshake as `Certificate`s, leaf first.
enum PeerChain {
    static func certificates(_ ssl: OpaquePointer) -> [Certificate] {
        // On the client side the stack includes the leaf; it survives session resumption.
        guard let stack = SSL_get_peer_cert_chain(ssl) else { return [] }
        return (0..<cs_sk_X509_num(stack)).compactMap { index in
            cs_sk_X509_value(stack, index).flatMap { try? Certificate(retaining: $0) }
        }
    }
}
