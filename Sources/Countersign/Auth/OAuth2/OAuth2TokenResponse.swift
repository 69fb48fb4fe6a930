import FoundationEssentials

/// Reads the token endpoint's answer (RFC 6749 §5.1 success, §5.2 error).
public enum OAuth2TokenResponse {
    public static func parse(status: Int, body: [UInt8], tokenURL: String, now: Date) throws -> OAuth2Token {
        let fields = try? JSONDecoder().decode(Fields.self, from: Data(body))
        guard (200..<300).contains(status) else {
            throw AuthError(errorSentence(status: status, fields: fields, tokenURL: tokenURL))
        }
        guard let fields else {
            throw AuthError("the token endpoint \(tokenURL) answered \(status) without a JSON object; expected access_token and token_type")
        }
        guard let token = fields.access_token, !token.isEmpty else {
            throw AuthError("the token endpoint \(tokenURL) answered without an access_token")
        }
        guard let type = fields.token_type, TokenSyntax.equalsIgnoringCase(type, "bearer") else {
            throw AuthError("the token endpoint \(tokenURL) issued a token of type \(fields.token_type ?? "none"); only bearer tokens can be sent")
        }
        if let lifetime = fields.expires_in, lifetime <= 0 {
            throw AuthError("the token endpoint \(tokenURL) issued a token that has already expired (expires_in \(lifetime))")
        }
        return OAuth2Token(accessToken: token, obtainedAt: now, expiresAt: fields.expires_in.map { now.addingTimeInterval($0) },
                           scope: fields.scope)
    }

    /// RFC 6749 §5.2: error, error_description, error_uri — turned into one sentence.
    static func errorSentence(status: Int, fields: Fields?, tokenURL: String) -> String {
        guard let code = fields?.error else {
            return "the token endpoint \(tokenURL) refused the request with status \(status)"
        }
        let hint: String
        switch code {
        case "invalid_client": hint = "check the client_id and client secret, and whether the endpoint expects them in Basic or in the body (oauth2.auth)"
        case "invalid_scope": hint = "check the configured scope"
        case "unauthorized_client": hint = "the client is not allowed the client_credentials grant; enable it at the identity provider"
        case "unsupported_grant_type": hint = "the endpoint does not support client_credentials"
        case "invalid_request": hint = "the endpoint found the request malformed"
        default: hint = "see the identity provider's documentation for this error"
        }
        var sentence = "the token endpoint \(tokenURL) refused the request (\(status) \(code)): \(hint)"
        if let description = fields?.error_description { sentence += "; it said: \(description)" }
        if let uri = fields?.error_uri { sentence += " (\(uri))" }
        return sentence
    }

    /// The members of §5.1 and §5.2 that matter here; others are ignored.
    struct Fields: Decodable {
        var access_token: String?
        var token_type: String?
        var expires_in: Double?
        var scope: String?
        var error: String?
        var error_description: String?
        var error_uri: String?

        enum CodingKeys: String, CodingKey {
            case access_token, token_type, expires_in, scope, error, error_description, error_uri
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            access_token = try? container.decodeIfPresent(String.self, forKey: .access_token)
            token_type = try? container.decodeIfPresent(String.self, forKey: .token_type)
            // Some servers send expires_in as a string.
            expires_in = (try? container.decodeIfPresent(Double.self, forKey: .expires_in))
                ?? (try? container.decodeIfPresent(String.self, forKey: .expires_in)).flatMap { $0.flatMap(Double.init) }
            scope = try? container.decodeIfPresent(String.self, forKey: .scope)
            error = try? container.decodeIfPresent(String.self, forKey: .error)
            error_description = try? container.decodeIfPresent(String.self, forKey: .error_description)
            error_uri = try? container.decodeIfPresent(String.self, forKey: .error_uri)
        }
    }
}
