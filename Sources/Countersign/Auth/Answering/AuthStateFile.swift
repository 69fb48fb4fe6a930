import Foundation

/// The `permanent` learned state as it is kept in `state_dir` across restarts: protection
/// spaces (scheme, realm, Digest nonce and count) and OAuth2 access tokens with their expiry.
/// Never a password, hash or client secret: those stay in the credential store.
public struct AuthStateFile: Codable, Sendable {
    public static let currentVersion = 1

    public var version: Int
    public var spaces: [LearnedSpace]
    public var tokens: [SavedToken]

    public init(spaces: [LearnedSpace], tokens: [SavedToken]) {
        version = Self.currentVersion
        self.spaces = spaces.sorted { $0.learnedAt < $1.learnedAt }
        self.tokens = tokens.sorted { $0.credentialName < $1.credentialName }
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        spaces = try container.decode([LearnedSpace].self, forKey: .spaces)
        // Files written before tokens were kept have none.
        tokens = try container.decodeIfPresent([SavedToken].self, forKey: .tokens) ?? []
    }

    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(self)
    }

    public static func decode(_ data: Data) throws -> AuthStateFile {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let state: AuthStateFile
        do {
            state = try decoder.decode(AuthStateFile.self, from: data)
        } catch {
            throw AuthError("the saved authentication state is not readable (\(error)); delete it to start afresh")
        }
        guard state.version == currentVersion else {
            throw AuthError("the saved authentication state has version \(state.version); this build reads version \(currentVersion)")
        }
        return state
    }
}

/// An OAuth2 access token kept for a `permanent` rule, with the registration it was issued
/// to, so that a credential pointed at another endpoint, client or scope never reuses it.
public struct SavedToken: Codable, Equatable, Sendable {
    public var credentialName: String
    public var tokenURL: String
    public var clientID: String
    public var scope: String?
    public var token: OAuth2Token

    public init(credentialName: String, client: OAuth2Client, token: OAuth2Token) {
        self.credentialName = credentialName
        tokenURL = client.tokenURL
        clientID = client.clientID
        scope = client.scope
        self.token = token
    }

    public func wasIssued(to client: OAuth2Client) -> Bool {
        tokenURL == client.tokenURL && clientID == client.clientID && scope == client.scope
    }
}
