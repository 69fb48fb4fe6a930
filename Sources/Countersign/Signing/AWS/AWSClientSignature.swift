/// What a request's own SigV4 signing says, read before it is replaced: where the signature
/// is, the client's credential scope (its region and service are the last resort of region and
/// service inference), the headers it chose to sign and, for a presigned query, its expiry.
/// The client's access key and signature are placeholders and are never kept.
public enum AWSClientSignature: Equatable, Sendable {
    /// No SigV4 signing material.
    case none
    /// `Authorization: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…`.
    case header(scope: AWSCredentialScope, signedHeaders: Set<String>)
    /// `X-Amz-Signature` in the query.
    case presignedQuery(scope: AWSCredentialScope, signedHeaders: Set<String>, expires: Int)

    /// An SDK lists a few dozen at most; a longer list is refused, not signed.
    static let maximumSignedHeaders = 64

    public var scope: AWSCredentialScope? {
        switch self {
        case .none: return nil
        case .header(let scope, _), .presignedQuery(let scope, _, _): return scope
        }
    }

    public static func read(_ request: SignableRequest) throws -> AWSClientSignature {
        let query = queryParameters(request.query)
        if query["x-amz-signature"] != nil {
            guard query["x-amz-algorithm"] == AWSStringToSign.algorithm else {
                throw AWSSigningError.invalidPresignedQuery("only X-Amz-Algorithm=AWS4-HMAC-SHA256 is re-signed")
            }
            guard let credential = query["x-amz-credential"] else { throw AWSSigningError.invalidPresignedQuery("no X-Amz-Credential") }
            guard let expiresText = query["x-amz-expires"], expiresText.utf8.count <= 7, let expires = Int(expiresText),
                  (1...AWSSigV4Signer.maximumExpiry).contains(expires) else {
                throw AWSSigningError.invalidPresignedQuery("X-Amz-Expires must be 1 to \(AWSSigV4Signer.maximumExpiry) seconds")
            }
            let scope = try AWSCredentialScope.parseCredential(credential[...]).scope
            return .presignedQuery(scope: scope, signedHeaders: try signedHeaders(query["x-amz-signedheaders"] ?? "host"), expires: expires)
        }
        let authorizations = request.fields.filter { $0.name.lowercased() == "authorization" }
        guard let authorization = authorizations.first else { return .none }
        guard authorizations.count == 1 else { throw AWSSigningError.invalidRequest("more than one Authorization field") }
        let value = authorization.value.drop { $0 == " " }
        guard value.hasPrefix(AWSStringToSign.algorithm + " ") else {
            // Another scheme (or SigV4a): not ours to read; the signer replaces it all the same.
            throw AWSSigningError.invalidRequest("the client's Authorization is not AWS4-HMAC-SHA256; only SigV4 is re-signed")
        }
        var parameters: [String: Substring] = [:]
        for part in value.dropFirst(AWSStringToSign.algorithm.count + 1).split(separator: ",") {
            let trimmed = part.drop { $0 == " " }
            guard let equals = trimmed.firstIndex(of: "=") else { throw AWSSigningError.invalidRequest("a malformed SigV4 Authorization") }
            parameters[String(trimmed[..<equals])] = trimmed[trimmed.index(after: equals)...].prefix { $0 != " " }
        }
        guard let credential = parameters["Credential"], let headers = parameters["SignedHeaders"], parameters["Signature"] != nil else {
            throw AWSSigningError.invalidRequest("the SigV4 Authorization lacks Credential, SignedHeaders or Signature")
        }
        return .header(scope: try AWSCredentialScope.parseCredential(credential).scope, signedHeaders: try signedHeaders(String(headers)))
    }

    /// Names as the client listed them (`host;x-amz-date`): lower-case tokens, bounded.
    static func signedHeaders(_ list: String) throws -> Set<String> {
        let names = list.split(separator: ";", omittingEmptySubsequences: false)
        guard names.count <= maximumSignedHeaders, names.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { AWSChunkedParser.isTokenByte($0) && !($0 >= 0x41 && $0 <= 0x5A) } }) else {
            throw AWSSigningError.invalidRequest("SignedHeaders is not a list of at most \(maximumSignedHeaders) lower-case field names")
        }
        return Set(names.map(String.init))
    }

    /// Decoded names (lower-cased) to decoded values; the first of a repeated name.
    static func queryParameters(_ query: String?) -> [String: String] {
        var result: [String: String] = [:]
        for pair in (query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(decoding: PercentEncoding.decode(parts[0]), as: UTF8.self).lowercased()
            guard name.hasPrefix("x-amz-"), result[name] == nil else { continue }
            result[name] = String(decoding: PercentEncoding.decode(parts.count > 1 ? parts[1] : ""), as: UTF8.self)
        }
        return result
    }
}
