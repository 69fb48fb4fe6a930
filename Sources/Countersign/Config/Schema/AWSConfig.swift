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
