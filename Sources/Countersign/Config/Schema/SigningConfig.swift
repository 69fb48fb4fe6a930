/// `credentials.<name>.signing`: the key RFC 9421 request signatures are made with.
public struct SigningKeyConfig: Sendable {
    public enum Source: Sendable {
        /// A shared secret (`hmac_secret_env` / `hmac_secret_file`): `hmac-sha256`, its raw bytes the key.
        case hmac(Secret)
        /// A PEM private key file (absolute path): Ed25519, ECDSA P-256/P-384 or RSA.
        case privateKey(path: String, passphrase: Secret?)
    }

    /// Sent as `keyid`.
    public var keyID: String
    public var source: Source

    public init(keyID: String, source: Source) {
        self.keyID = keyID
        self.source = source
    }
}

/// `hosts.*.sign`: how requests to the host are signed.
public struct SignConfig: Sendable {
    public enum Format: String, Sendable, CaseIterable {
        case rfc9421
    }

    public enum ContentDigest: String, Sendable, CaseIterable {
        case sha256 = "sha-256"
        case sha512 = "sha-512"
        case none
    }

    /// A name under `credentials` with `signing`.
    public var credential: String
    public var format: Format
    /// Component identifiers as written (`@method`, `content-type`, `"@query-param";name="id"`).
    public var components: [String]
    public var contentDigest: ContentDigest
    public var label: String
    /// Seconds after `created` that `expires` names; nil: no `expires`.
    public var expiresIn: Double?
    public var nonce: Bool
    public var tag: String?
    /// `rsa-v1_5-sha256` for an RSA key that must sign that way; nil: the key's own algorithm.
    public var algorithm: String?

    public static let defaultComponents = ["@method", "@authority", "@path", "@query", "content-digest", "content-type"]

    public init(credential: String, format: Format = .rfc9421, components: [String] = SignConfig.defaultComponents,
                contentDigest: ContentDigest = .sha256, label: String = "sig1", expiresIn: Double? = nil, nonce: Bool = true,
                tag: String? = nil, algorithm: String? = nil) {
        self.credential = credential
        self.format = format
        self.components = components
        self.contentDigest = contentDigest
        self.label = label
        self.expiresIn = expiresIn
        self.nonce = nonce
        self.tag = tag
        self.algorithm = algorithm
    }

    /// Whether a request with a body must be held whole before its head goes (to hash it).
    public var needsBody: Bool { contentDigest != .none }
}


/// `credentials.<name>.verifying`: the key an origin's response signatures must verify with.
public struct VerifyingKeyConfig: Sendable {
    public enum Source: Sendable {
        case hmac(Secret)
        /// A PEM public key file (absolute path).
        case publicKey(path: String)
    }

    /// The `keyid` the origin sends; a signature naming another is not accepted.
    public var keyID: String
    public var source: Source

    public init(keyID: String, source: Source) {
        self.keyID = keyID
        self.source = source
    }
}

/// `hosts.*.verify_responses`: what every response from the host must carry before a byte of
/// it reaches the client.
public struct VerifyConfig: Sendable {
    public enum ContentDigest: String, Sendable, CaseIterable {
        /// Every response with content carries a Content-Digest that matches its body.
        case required
        /// A Content-Digest, when present, must match.
        case ifPresent = "if-present"
    }

    /// A name under `credentials` with `verifying`.
    public var credential: String
    /// Components the signature must cover at least.
    public var components: [String]
    /// Seconds a signature's `created` may lie in the past.
    public var maxAge: Double
    public var contentDigest: ContentDigest

    public static let defaultComponents = ["@status", "content-digest"]

    public init(credential: String, components: [String] = VerifyConfig.defaultComponents, maxAge: Double = 300,
                contentDigest: ContentDigest = .required) {
        self.credential = credential
        self.components = components
        self.maxAge = maxAge
        self.contentDigest = contentDigest
    }
}
