/// AWS Signature Version 4 over a `SignableRequest`: a pure function of (request, parameters)
/// giving the edits that sign it, in the header form (`Authorization`) or the query form
/// (a presigned URL). The request's own signing fields are never part of what is signed: they
/// are removed and made anew, which is also how an SDK's placeholder signature is replaced.
public enum AWSSigV4Signer {
    /// The fields a signature replaces wherever it lives.
    static let signingFields: Set<String> = ["authorization", "x-amz-date", "x-amz-security-token"]

    /// The query parameters of a presigned request, replaced when one is signed in the query.
    static let presignParameters: Set<String> = [
        "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-expires", "x-amz-signedheaders",
        "x-amz-security-token", "x-amz-signature",
    ]

    /// The longest validity AWS accepts for a presigned request: seven days.
    public static let maximumExpiry = 604_800

    // MARK: Header form

    public static func signHeaders(_ request: SignableRequest, _ parameters: AWSSigningParameters,
                                   keys: AWSSigningKeyCache = .shared) throws -> AWSSignedRequest {
        try parameters.validate()
        var removed = signingFields
        if parameters.sendsContentSHA256 { removed.insert("x-amz-content-sha256") }
        let timestamp = parameters.timestamp
        let token = parameters.credentials.sessionToken

        var added: [(name: String, value: String)] = []
        var signedAdditions: Set<String> = ["x-amz-date"]
        if let token {
            added.append(("X-Amz-Security-Token", token))
            if parameters.sessionTokenPlacement == .signed { signedAdditions.insert("x-amz-security-token") }
        }
        added.append(("X-Amz-Date", timestamp.amzDate))
        if parameters.sendsContentSHA256 {
            added.append(("X-Amz-Content-Sha256", parameters.payload.value))
            signedAdditions.insert("x-amz-content-sha256")
        }

        let kept = try keptFields(request, removing: removed)
        let covered = kept + added.filter { signedAdditions.contains($0.name.lowercased()) }
        let headers = AWSCanonicalHeaders(covered, selection: including(parameters.headers, signedAdditions))
        let query = AWSCanonicalQuery.canonical(AWSCanonicalQuery.parameters(request.query))
        let (canonical, stringToSign, key, signature) = sign(request, parameters, query: query, headers: headers, keys: keys)

        added.append(("Authorization", "\(AWSStringToSign.algorithm) Credential=\(parameters.credentials.accessKeyID)/\(parameters.scope.text), "
                      + "SignedHeaders=\(headers.signedHeaders), Signature=\(signature)"))
        return AWSSignedRequest(removedFields: removed, addedFields: added, target: nil, signature: signature, timestamp: timestamp,
                                scope: parameters.scope, signingKey: key, canonicalRequest: canonical, stringToSign: stringToSign)
    }

    // MARK: Query form

    /// Presigns: the query keeps its other parameters as sent and gains `X-Amz-*`, valid for
    /// `expires` seconds (1 to 604 800). The payload is usually `.unsigned` (S3) or the empty hash.
    public static func signQuery(_ request: SignableRequest, _ parameters: AWSSigningParameters, expires: Int,
                                 keys: AWSSigningKeyCache = .shared) throws -> AWSSignedRequest {
        try parameters.validate()
        guard (1...maximumExpiry).contains(expires) else {
            throw AWSSigningError.invalidPresignedQuery("X-Amz-Expires must be 1 to \(maximumExpiry) seconds")
        }
        let timestamp = parameters.timestamp
        let credential = "\(parameters.credentials.accessKeyID)/\(parameters.scope.text)"
        let kept = try keptFields(request, removing: signingFields)
        let headers = AWSCanonicalHeaders(kept, selection: parameters.headers)

        let keptPairs = (request.query ?? "").split(separator: "&", omittingEmptySubsequences: true).filter { pair in
            let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
            return !presignParameters.contains(String(decoding: PercentEncoding.decode(name), as: UTF8.self).lowercased())
        }
        // The order the signing suite's signed requests show, after the client's own parameters.
        var ours = [
            AWSQueryParameter(name: "X-Amz-Algorithm", value: AWSStringToSign.algorithm),
            AWSQueryParameter(name: "X-Amz-Credential", value: credential),
            AWSQueryParameter(name: "X-Amz-Date", value: timestamp.amzDate),
            AWSQueryParameter(name: "X-Amz-SignedHeaders", value: headers.signedHeaders),
            AWSQueryParameter(name: "X-Amz-Expires", value: String(expires)),
        ]
        let tokenParameter = parameters.credentials.sessionToken.map { AWSQueryParameter(name: "X-Amz-Security-Token", value: $0) }
        if let tokenParameter, parameters.sessionTokenPlacement == .signed { ours.append(tokenParameter) }

        let query = AWSCanonicalQuery.canonical(AWSCanonicalQuery.parameters(keptPairs.joined(separator: "&")) + ours)
        let (canonical, stringToSign, key, signature) = sign(request, parameters, query: query, headers: headers, keys: keys)

        if let tokenParameter, parameters.sessionTokenPlacement == .appendedAfterSigning { ours.append(tokenParameter) }
        ours.append(AWSQueryParameter(name: "X-Amz-Signature", value: signature))
        let queryText = (keptPairs.map(String.init) + ours.map { "\($0.name)=\($0.value)" }).joined(separator: "&")
        let path = request.path.isEmpty ? "/" : request.path
        return AWSSignedRequest(removedFields: signingFields, addedFields: [], target: path + "?" + queryText, signature: signature,
                                timestamp: timestamp, scope: parameters.scope, signingKey: key, canonicalRequest: canonical,
                                stringToSign: stringToSign)
    }

    // MARK: Shared

    private static func sign(_ request: SignableRequest, _ parameters: AWSSigningParameters, query: String, headers: AWSCanonicalHeaders,
                             keys: AWSSigningKeyCache) -> (canonical: String, stringToSign: String, key: [UInt8], signature: String) {
        let canonical = [
            request.method, AWSCanonicalPath.canonical(request.path, encoding: parameters.pathEncoding), query,
            headers.block, headers.signedHeaders, parameters.payload.value,
        ].joined(separator: "\n")
        let stringToSign = AWSStringToSign.make(timestamp: parameters.timestamp, scope: parameters.scope, canonicalRequest: canonical)
        let key = keys.key(for: parameters.credentials, scope: parameters.scope)
        return (canonical, stringToSign, key, AWSSigningKey.signature(key: key, stringToSign: stringToSign))
    }

    /// The request's fields minus `removing`, with `Host` from the authority when none was sent
    /// (an HTTP/2 request, or a head before the proxy adds it). A field name or value a signed
    /// head cannot carry is refused rather than signed.
    private static func keptFields(_ request: SignableRequest, removing: Set<String>) throws -> [(name: String, value: String)] {
        var kept = request.fields.filter { !removing.contains($0.name.lowercased()) }
        if !kept.contains(where: { $0.name.lowercased() == "host" }) {
            guard !request.authority.isEmpty else { throw AWSSigningError.invalidRequest("the request names no host") }
            kept.append(("host", request.authority))
        }
        for field in kept where field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) {
            throw AWSSigningError.invalidRequest("the \(field.name) field holds a line break")
        }
        return kept
    }

    private static func including(_ selection: AWSHeaderSelection, _ names: Set<String>) -> AWSHeaderSelection {
        switch selection {
        case .allEndToEnd: return .allEndToEnd
        case .named(let chosen): return .named(chosen.union(names))
        }
    }
}
