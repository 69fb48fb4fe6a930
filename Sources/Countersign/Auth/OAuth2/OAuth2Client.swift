/// An OAuth2 client-credentials registration (RFC 6749 §4.4).
public struct OAuth2Client: Sendable, CustomStringConvertible {
    /// Where the client secret goes: HTTP Basic (RFC 6749 §2.3.1, the default) or the form body.
    public enum SecretPlacement: String, Sendable, Codable {
        case basic
        case body
    }

    public var tokenURL: String
    public var clientID: String
    let clientSecret: String
    public var scope: String?
    public var secretPlacement: SecretPlacement

    public init(tokenURL: String, clientID: String, clientSecret: String, scope: String? = nil, secretPlacement: SecretPlacement = .basic) {
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.scope = scope
        self.secretPlacement = secretPlacement
    }

    public var description: String { "OAuth2 client \(clientID) at \(tokenURL)" }
}
