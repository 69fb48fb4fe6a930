/// How the body is to be covered, as configured (`payload`).
public enum AWSPayloadChoice: Equatable, Sendable {
    /// The body was held and hashed (`payload: "signed"`): its hash.
    case signed(AWSPayloadHash)
    /// `UNSIGNED-PAYLOAD`.
    case unsigned
    /// Keep the mode the SDK chose in its `X-Amz-Content-Sha256`.
    case client
}

/// Re-signs what a client sends: an SDK's placeholder signature is replaced (in the header or,
/// for a presigned URL, in the query keeping its expiry); an unsigned request is signed in the
/// header form. An aws-chunked body keeps its streaming mode whatever `payload` says: the body
/// cannot be re-hashed without holding it whole, and its framing says how it is to be read.
public enum AWSResigner {
    public struct Plan: Sendable {
        public let signed: AWSSignedRequest
        /// The payload mode signed; a streaming mode means the body must go through an
        /// `AWSChunkedResigner` (chunk signatures) or its checks (unsigned trailer).
        public let payload: AWSPayloadHash
        public let client: AWSClientSignature
    }

    public static func resign(_ request: SignableRequest, credentials: AWSCredentials, region: String, service: String,
                              unixTime: Int64, payload choice: AWSPayloadChoice,
                              keys: AWSSigningKeyCache = .shared) throws -> Plan {
        let client = try AWSClientSignature.read(request)
        let clientHashes = request.fields.filter { $0.name.lowercased() == "x-amz-content-sha256" }
        guard clientHashes.count <= 1 else { throw AWSSigningError.invalidRequest("more than one X-Amz-Content-Sha256 field") }
        let clientPayload = try clientHashes.first.map { field in
            guard let hash = AWSPayloadHash(headerValue: field.value) else {
                throw AWSSigningError.invalidRequest("X-Amz-Content-Sha256 is not a SigV4 payload hash or mode")
            }
            return hash
        }

        switch client {
        case .presignedQuery(_, let signedHeaders, let expires):
            // A presigned URL carries no body hash: S3 signs UNSIGNED-PAYLOAD, others the body's.
            let payload: AWSPayloadHash
            switch choice {
            case .signed(let hash): payload = AWSPathEncoding.isS3(service) ? .unsigned : hash
            case .unsigned, .client: payload = .unsigned
            }
            let parameters = AWSSigningParameters(credentials: credentials, region: region, service: service, unixTime: unixTime,
                                                  payload: payload, headers: .named(signedHeaders))
            return Plan(signed: try AWSSigV4Signer.signQuery(request, parameters, expires: expires, keys: keys), payload: payload, client: client)
        case .header, .none:
            let (payload, hashField) = try headerFormPayload(choice, client: clientPayload)
            var selection = AWSHeaderSelection.allEndToEnd
            if case .header(_, let signedHeaders) = client {
                selection = .named(hashField == .clients ? signedHeaders.union(["x-amz-content-sha256"]) : signedHeaders)
            }
            let sendsHash = hashField == .ours && (clientPayload != nil || AWSPathEncoding.isS3(service) || payload.isStreaming || payload == .unsigned)
            let parameters = AWSSigningParameters(credentials: credentials, region: region, service: service, unixTime: unixTime,
                                                  payload: payload, headers: selection, sendsContentSHA256: sendsHash)
            return Plan(signed: try AWSSigV4Signer.signHeaders(request, parameters, keys: keys), payload: payload, client: client)
        }
    }

    /// Whose `X-Amz-Content-Sha256` goes out: ours (replacing any the client sent, or added
    /// where the service wants one) or the client's, kept as sent and signed (`payload: client`).
    enum ContentHashField { case ours, clients }

    /// A streaming body keeps the client's mode whatever the choice: its framing says how it is read.
    static func headerFormPayload(_ choice: AWSPayloadChoice, client: AWSPayloadHash?) throws -> (AWSPayloadHash, ContentHashField) {
        if let client, client.isStreaming { return (client, .ours) }
        switch choice {
        case .signed(let hash): return (hash, .ours)
        case .unsigned: return (.unsigned, .ours)
        case .client:
            guard let client else {
                throw AWSSigningError.invalidRequest("payload \"client\" needs the client's X-Amz-Content-Sha256 (use \"signed\" for this service)")
            }
            return (client, .clients)
        }
    }
}
