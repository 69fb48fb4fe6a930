/// The token request of the client-credentials grant, ready to send (RFC 6749 §4.4.2).
public struct OAuth2TokenRequest: CustomStringConvertible {
    public let method = "POST"
    public let url: String
    /// Header fields to send; one of them may carry the client secret, so never log their values.
    public let headerFields: [(name: String, value: String)]
    public let body: [UInt8]

    public init(client: OAuth2Client) throws {
        var form: [(String, String)] = [("grant_type", "client_credentials")]
        if let scope = client.scope, !scope.isEmpty { form.append(("scope", scope)) }
        var fields: [(name: String, value: String)] = [
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Accept", "application/json"),
        ]
        switch client.secretPlacement {
        case .basic:
            // Both parts are form-encoded first, so a ':' in the id cannot shift the boundary.
            let basic = try BasicAnswer.authorization(user: FormURLEncoding.encode(client.clientID),
                                                      password: FormURLEncoding.encode(client.clientSecret))
            fields.append(("Authorization", basic))
        case .body:
            form.append(("client_id", client.clientID))
            form.append(("client_secret", client.clientSecret))
        }
        let encoded = Array(FormURLEncoding.encode(form).utf8)
        fields.append(("Content-Length", String(encoded.count)))
        url = client.tokenURL
        headerFields = fields
        body = encoded
    }

    public var description: String { "OAuth2 token request to \(url) (\(body.count) byte form body)" }
}
