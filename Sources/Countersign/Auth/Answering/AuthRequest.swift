import CountersignHTTP
import CountersignSupport

/// What the answering state machine needs to know about the request being authenticated.
public struct AuthRequest: Sendable {
    public var method: String
    /// The request-target as sent on the request line (Digest's `uri`).
    public var target: String
    /// Whether the connection that carries the answer is TLS-protected.
    public var connectionIsTLS: Bool
    /// Whether the request (with its body) can be sent again after a challenge.
    public var bodyReplayable: Bool
    public var body: RequestBodyHash
    /// MsvAvChannelBindings of the certificate the upstream served (`TLSChannelBinding`); nil on plaintext.
    public var channelBinding: [UInt8]?
    /// The same binding as GSSAPI takes it: RFC 5929 application data, "tls-server-end-point:"
    /// and the certificate's hash; nil on plaintext.
    public var gssChannelBinding: [UInt8]?
    /// The upstream connection the answer will go on, once one is attached: nil before.
    public var connection: UpstreamConnectionFacts?

    public init(method: String, target: String, connectionIsTLS: Bool, bodyReplayable: Bool = true,
                body: RequestBodyHash = .empty, channelBinding: [UInt8]? = nil, gssChannelBinding: [UInt8]? = nil,
                connection: UpstreamConnectionFacts? = nil) {
        self.gssChannelBinding = gssChannelBinding
        self.connection = connection
        self.method = method
        self.target = target
        self.connectionIsTLS = connectionIsTLS
        self.bodyReplayable = bodyReplayable
        self.body = body
        self.channelBinding = channelBinding
    }
}

/// What an answer needs to know of the connection that will carry it.
/// What a fixed preemptive answer (Basic, a static token) needs of its request: what the
/// answer is accepted or refused for, and whether the connection is encrypted. The exchange
/// gives these as they are; the whole `AuthRequest` is built only for a scheme that computes
/// its answer.
public struct RequestFacts: Sendable {
    public var method: String
    public var target: String
    public var connectionIsTLS: Bool

    public init(method: String, target: String, connectionIsTLS: Bool) {
        self.method = method
        self.target = target
        self.connectionIsTLS = connectionIsTLS
    }

    public init(_ request: AuthRequest) {
        self.init(method: request.method, target: request.target, connectionIsTLS: request.connectionIsTLS)
    }
}

public struct UpstreamConnectionFacts: Sendable, Equatable {
    /// The credential a connection-bound handshake (NTLM, Negotiate) already authenticated it
    /// as; nil for a connection no handshake ran on.
    public var authenticatedAs: String?

    public init(authenticatedAs: String?) {
        self.authenticatedAs = authenticatedAs
    }
}

/// What is known of H(entity-body) for Digest qop=auth-int.
public enum RequestBodyHash: Sendable {
    /// No body: H of the empty string.
    case empty
    /// Lower-case hex digests computed while the body streamed (see `DigestHasher`).
    case known([HashFunction: String])
    /// Streamed without hashing: auth-int cannot be offered.
    case unavailable

    func hex(for function: HashFunction) -> String? {
        switch self {
        case .empty: return Hex.encode(MessageDigest.hash(function, []))
        case .known(let digests): return digests[function]
        case .unavailable: return nil
        }
    }
}

/// A response head as the state machine sees it: its status and its fields as parsed. The
/// answerer reads only the fields it needs (the challenge, `Authentication-Info`), found by
/// comparing names as bytes: no other field becomes a `String`.
public struct AuthResponseHead: Sendable {
    public var status: Int
    public var headers: HeaderFields

    public init(status: Int, headers: HeaderFields) {
        self.status = status
        self.headers = headers
    }

    public init(_ response: ResponseHead) {
        self.init(status: response.status, headers: response.headers)
    }

    public init(status: Int, fields: [(name: String, value: String)]) {
        self.init(status: status, headers: HeaderFields(fields.map { HeaderField($0.name, $0.value) }))
    }

    func values(_ name: String) -> [String] { headers.values(name) }
}
