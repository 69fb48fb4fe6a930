import FoundationEssentials

/// An access token from the token endpoint, with the moment it stops being usable.
public struct OAuth2Token: Codable, Equatable, Sendable, CustomStringConvertible {
    let accessToken: String
    public let obtainedAt: Date
    /// Nil when the endpoint gave no `expires_in`: usable until an upstream rejects it.
    public let expiresAt: Date?
    public let scope: String?

    public init(accessToken: String, obtainedAt: Date, expiresAt: Date?, scope: String? = nil) {
        self.accessToken = accessToken
        self.obtainedAt = obtainedAt
        self.expiresAt = expiresAt
        self.scope = scope
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

    /// The `Authorization` value for this token.
    public func authorization() throws -> String { try BearerAnswer.authorization(token: accessToken) }

    public var description: String {
        "OAuth2 access token (\(accessToken.utf8.count) bytes)" + (expiresAt.map { ", expires \($0)" } ?? "")
    }
}
