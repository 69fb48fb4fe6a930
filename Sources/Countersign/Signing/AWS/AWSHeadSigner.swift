import CountersignHTTP

/// `payload` of an aws-sigv4 host: how the body is covered when it is not aws-chunked.
public enum AWSPayloadMode: String, Sendable, CaseIterable {
    /// The body was held and hashed; its hash is in the head's `X-Amz-Content-Sha256`
    /// (put there by the proxy's body holder, replacing the client's).
    case signed
    /// `UNSIGNED-PAYLOAD`.
    case unsigned
    /// The SDK's own `X-Amz-Content-Sha256`, kept.
    case client
}

/// Signs a request head as it goes upstream with AWS Signature Version 4 (`hosts.*.sign`,
/// format aws-sigv4): the serialized head is read back, the client's own SigV4 material is
/// replaced (`AWSResigner`), and the head is written anew. Made for every attempt, so a
/// replay carries a signature (and `X-Amz-Date`) of its own.
public struct AWSHeadSigner: Sendable {
    public let region: String?
    public let service: String?
    public let payload: AWSPayloadMode

    public init(region: String?, service: String?, payload: AWSPayloadMode) {
        self.region = region
        self.service = service
        self.payload = payload
    }

    /// The signed head, and what the body that follows must go through.
    public struct Signed: Sendable {
        public let head: [UInt8]
        /// The signature's payload mode: a streaming one means an aws-chunked body whose chunk
        /// signatures (if any) are re-made with `request.chunkSigner()`.
        public let payload: AWSPayloadHash
        public let request: AWSSignedRequest
        public let scope: AWSResolvedScope
    }

    /// Whether a request with a body must be held whole before it is signed: `payload: signed`
    /// unless the body is aws-chunked (it keeps its streaming mode, one chunk held at a time).
    public func holdsBody(contentSHA256: String?) -> Bool {
        guard payload == .signed else { return false }
        return !(contentSHA256.flatMap(AWSPayloadHash.init(headerValue:))?.isStreaming ?? false)
    }

    /// The region and service a request to `host` is signed for, without a client scope (`check`).
    public func resolvedScope(host: String, client: AWSCredentialScope? = nil) throws -> AWSResolvedScope {
        try AWSScopeResolver.resolve(configuredRegion: region, configuredService: service, host: host, client: client)
    }

    /// `head` is a complete request head as serialized for the upstream; `originTarget` the
    /// origin-form target; `targetPrefix` what goes before a re-signed origin-form target (the
    /// scheme and authority of an absolute target through a parent proxy, else empty).
    public func sign(head: [UInt8], credentials: AWSCredentials, scheme: String, authority: String, originTarget: String,
                     targetPrefix: String, hasBody: Bool, now: Int64, keys: AWSSigningKeyCache = .shared) throws -> Signed {
        var parsed: RequestHead
        switch head.withUnsafeBytes({ HeadParser.parseRequest($0, maxHeadBytes: head.count) }) {
        case .complete(let request, _): parsed = request
        default: throw AWSSigningError.invalidRequest("the request head to sign does not parse")
        }
        let fields = parsed.headers.fields.map { (name: $0.name, value: $0.value) }
        let message = SignableRequest(method: parsed.method, scheme: scheme, authority: authority, target: originTarget, fields: fields)
        let client = try AWSClientSignature.read(message)
        let host = authority.split(separator: ":").first.map(String.init) ?? authority
        let scope = try resolvedScope(host: host, client: client.scope)
        let plan = try AWSResigner.resign(message, credentials: credentials, region: scope.region, service: scope.service,
                                          unixTime: now, payload: try choice(parsed.headers, hasBody: hasBody), keys: keys)
        for name in plan.signed.removedFields { parsed.headers.removeAll(name) }
        for field in plan.signed.addedFields { parsed.headers.append(field.name, field.value) }
        if let target = plan.signed.target { parsed.target = targetPrefix + target }
        let bytes = HeadSerializer.request(method: parsed.method, target: parsed.target, version: parsed.version, headers: parsed.headers)
        return Signed(head: bytes, payload: plan.payload, request: plan.signed, scope: scope)
    }

    private func choice(_ headers: HeaderFields, hasBody: Bool) throws -> AWSPayloadChoice {
        switch payload {
        case .unsigned: return .unsigned
        case .client: return .client
        case .signed:
            guard hasBody else { return .signed(.emptyBody) }
            // The holder's hash, or the client's streaming mode (kept whatever `payload` says).
            guard let value = headers.values("X-Amz-Content-Sha256").last, let hash = AWSPayloadHash(headerValue: value) else {
                throw AWSSigningError.invalidRequest("the body was not hashed before signing")
            }
            return .signed(hash)
        }
    }
}
