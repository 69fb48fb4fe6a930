/// How long learned state lives (SPEC: NSURLCredentialPersistence none / forSession / permanent).
public enum Persistence: String, Codable, Sendable {
    case none
    case session
    case permanent
}

/// One protection-space rule of a host, mirroring the configuration's `auth` entries.
public struct AuthRule: Sendable, Equatable {
    public var credentialName: String
    /// Allowed schemes in order of preference; empty means every scheme the credential can answer.
    public var schemes: [AuthSchemeName]
    /// Nil matches any realm (and realm-less schemes such as NTLM); otherwise compared exactly.
    public var realm: String?
    public var persistence: Persistence
    public var preemptive: Bool
    public var maxFailures: Int
    /// Whether password-equivalent answers (Basic, Bearer) may cross an unencrypted connection.
    public var allowPlaintext: Bool
    /// Negotiate: the service to ask a ticket for ("HTTP@host", "HTTP/host@REALM"); nil: HTTP@ the target's host.
    public var spn: String?

    public init(credentialName: String, schemes: [AuthSchemeName] = [], realm: String? = nil,
                persistence: Persistence = .session, preemptive: Bool? = nil, maxFailures: Int = 1, allowPlaintext: Bool = false,
                spn: String? = nil) {
        self.spn = spn
        self.credentialName = credentialName
        self.schemes = schemes
        self.realm = realm
        self.persistence = persistence
        self.preemptive = preemptive ?? (persistence != .none)
        self.maxFailures = max(1, maxFailures)
        self.allowPlaintext = allowPlaintext
    }

    func matches(realm challengeRealm: String?) -> Bool {
        guard let realm else { return true }
        return challengeRealm == realm
    }
}
