import FoundationEssentials

/// An access token from the token endpoint, with the moment it stops being usable.
public struct OAuth2Token: Codable, Equatable, Sendable, CustomStringConvertible, CustomReflectable {
    let accessToken: String
    public let obtainedAt: Date
    /// Nil when the endpoint gave no `expires_in`: usable until an upstream rejects it.
    public let expiresAt: Date?
    public let scope: String?
    /// `Bearer <token>`, checked and built once when the token arrives (fetched, or read back
    /// from `state_dir`) rather than per request; or why the token cannot be sent.
    let preparedAuthorization: Result<SecretValue, AuthError>

    public init(accessToken: String, obtainedAt: Date, expiresAt: Date?, scope: String? = nil) {
        self.accessToken = accessToken
        self.obtainedAt = obtainedAt
        self.expiresAt = expiresAt
        self.scope = scope
        preparedAuthorization = Result { try BearerAnswer.authorization(token: accessToken) }.mapError { error in
            error as? AuthError ?? AuthError("the access token cannot be sent as a Bearer value")
        }.map(SecretValue.init)
    }

    /// What `state_dir` keeps: the prepared value is made again when the token is read back.
    private enum CodingKeys: String, CodingKey {
        case accessToken, obtainedAt, expiresAt, scope
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(accessToken: try container.decode(String.self, forKey: .accessToken),
                  obtainedAt: try container.decode(Date.self, forKey: .obtainedAt),
                  expiresAt: try container.decodeIfPresent(Date.self, forKey: .expiresAt),
                  scope: try container.decodeIfPresent(String.self, forKey: .scope))
    }

    /// An expired token is never sent.
    public func isUsable(now: Date) -> Bool {
        guard let expiresAt else { return true }
        return now < expiresAt
    }

    /// True once less than min(60 s, 10 % of the lifetime) remains, so a fresh token is fetched
    /// before the old one lapses mid-request.
    public func needsRefresh(now: Date) -> Bool {
        guard let expiresAt else { return false }
        let lifetime = expiresAt.timeIntervalSince(obtainedAt)
        let margin = min(60, lifetime * 0.1)
        return expiresAt.timeIntervalSince(now) < margin
    }

    /// The `Authorization` value for this token, prepared when the token arrived.
    func authorization() throws -> SecretValue { try preparedAuthorization.get() }

    /// The token's bytes for `inject` and placeholders: only a token that passed the Bearer
    /// check (b64token: no space, no control character) when it arrived, so it cannot split a
    /// header or a query; otherwise why it cannot be sent.
    public func injectableValue() throws -> [UInt8] {
        _ = try preparedAuthorization.get()
        return Array(accessToken.utf8)
    }

    public var description: String {
        "OAuth2 access token (\(accessToken.utf8.count) bytes)" + (expiresAt.map { ", expires \($0)" } ?? "")
    }

    /// `dump` and debuggers show the timing only: the access token is as good as a password.
    public var customMirror: Mirror {
        Mirror(self, children: ["accessToken": "<redacted>", "obtainedAt": obtainedAt, "expiresAt": expiresAt as Any, "scope": scope as Any])
    }
}
