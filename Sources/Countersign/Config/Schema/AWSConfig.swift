/// `credentials.<name>.aws`: static AWS keys, each from an environment variable or a file
/// (reloaded with the rest), with an optional session token (temporary credentials).
public struct AWSKeysConfig: Sendable {
    public var accessKeyID: Secret
    public var secretAccessKey: Secret
    public var sessionToken: Secret?

    public init(accessKeyID: Secret, secretAccessKey: Secret, sessionToken: Secret? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }
}

/// `credentials.<name>.aws` with `role_arn`: temporary keys from STS `AssumeRoleWithWebIdentity`
/// (Kubernetes IRSA / EKS style), the web identity token read from `token_file` each time
/// (the file is watched: a rotated token brings new keys), fetched once for the process and
/// refreshed ahead of their expiry.
public struct AWSWebIdentityConfig: Sendable {
    public var roleARN: String
    /// Absolute path of the OIDC token (`web_identity_token_file`).
    public var tokenFile: String
    /// `sts_endpoint`; default the global `https://sts.amazonaws.com`.
    public var stsEndpoint: EndpointURL
    /// `role_session_name`; default `countersign`.
    public var sessionName: String
    /// `duration`: how long the keys asked for last (STS: 900 s to the role's maximum); nil: STS's default (1 h).
    public var durationSeconds: Int?

    public static let defaultEndpoint = EndpointURL(scheme: "https", host: "sts.amazonaws.com", port: 443, path: "/")
    public static let defaultSessionName = "countersign"

    public init(roleARN: String, tokenFile: String, stsEndpoint: EndpointURL = defaultEndpoint,
                sessionName: String = defaultSessionName, durationSeconds: Int? = nil) {
        self.roleARN = roleARN
        self.tokenFile = tokenFile
        self.stsEndpoint = stsEndpoint
        self.sessionName = sessionName
        self.durationSeconds = durationSeconds
    }
}

/// Where an `aws` credential's keys come from.
public enum AWSCredentialsConfig: Sendable {
    case keys(AWSKeysConfig)
    case webIdentity(AWSWebIdentityConfig)
}

/// `hosts.*.sign` with `format: "aws-sigv4"`: requests re-signed with AWS Signature Version 4.
public struct AWSSignConfig: Sendable {
    public enum Payload: String, Sendable, CaseIterable {
        /// The body is held and hashed (X-Amz-Content-Sha256 its SHA-256).
        case signed
        /// `UNSIGNED-PAYLOAD`: nothing held.
        case unsigned
        /// The mode the client's SDK chose, kept.
        case client
    }

    /// A name under `credentials` with `aws`.
    public var credential: String
    /// nil: from the host name, else the client's own credential scope.
    public var region: String?
    public var service: String?
    public var payload: Payload

    public init(credential: String, region: String? = nil, service: String? = nil, payload: Payload = .signed) {
        self.credential = credential
        self.region = region
        self.service = service
        self.payload = payload
    }
}
