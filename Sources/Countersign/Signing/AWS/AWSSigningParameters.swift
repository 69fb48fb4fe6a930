/// Where the session token goes relative to the signature.
public enum AWSSessionTokenPlacement: Equatable, Sendable {
    /// Covered by the signature (every service but a few).
    case signed
    /// Added after signing, uncovered (services that reject a signed token, e.g. IoT's
    /// MQTT-over-WebSocket; the signing suite's `omit_session_token`).
    case appendedAfterSigning
}

/// Everything a SigV4 signature depends on besides the request.
public struct AWSSigningParameters: Sendable {
    public var credentials: AWSCredentials
    public var region: String
    public var service: String
    /// The signing time, Unix seconds: the caller's clock (tests pass a fixed one).
    public var unixTime: Int64
    public var payload: AWSPayloadHash
    public var pathEncoding: AWSPathEncoding
    public var headers: AWSHeaderSelection
    /// Header form: send `X-Amz-Content-Sha256` (S3 requires it; other services accept it).
    public var sendsContentSHA256: Bool
    public var sessionTokenPlacement: AWSSessionTokenPlacement

    public init(credentials: AWSCredentials, region: String, service: String, unixTime: Int64,
                payload: AWSPayloadHash = .emptyBody, pathEncoding: AWSPathEncoding? = nil,
                headers: AWSHeaderSelection = .allEndToEnd, sendsContentSHA256: Bool? = nil,
                sessionTokenPlacement: AWSSessionTokenPlacement = .signed) {
        self.credentials = credentials
        self.region = region
        self.service = service
        self.unixTime = unixTime
        self.payload = payload
        self.pathEncoding = pathEncoding ?? .forService(service)
        self.headers = headers
        // S3 refuses a request without it; a streaming or unsigned body must say so in it.
        self.sendsContentSHA256 = sendsContentSHA256 ?? (AWSPathEncoding.isS3(service) || payload.isStreaming || payload == .unsigned)
        self.sessionTokenPlacement = sessionTokenPlacement
    }

    var timestamp: AWSTimestamp { AWSTimestamp(unixSeconds: unixTime) }

    var scope: AWSCredentialScope { AWSCredentialScope(date: String(timestamp.date), region: region, service: service) }

    func validate() throws {
        guard AWSCredentialScope.isToken(region[...]), AWSCredentialScope.isToken(service[...]) else {
            throw AWSSigningError.invalidScope("region and service must be 1 to 64 letters, digits, '-', '_' or '.'")
        }
        guard !credentials.accessKeyID.isEmpty, !credentials.accessKeyID.contains("/"), !credentials.secretAccessKey.isEmpty else {
            throw AWSSigningError.invalidRequest("the AWS access key id or secret is empty or malformed")
        }
    }
}
