import FoundationEssentials

/// What the answerer holds, in one object: every exchange with a host takes a copy of the
/// host's answerer, which costs one retain this way, not one per field (and an outlined
/// copy of them all: ~1.4k instructions per use). Copied on the first change of a shared one.
final class AnswererParts: @unchecked Sendable {
    var rules: [AuthRule]
    var credentials: [String: CredentialMaterial]
    let prepared: PreparedCredentials
    let store: ProtectionSpaceStore
    var digestResponder = DigestResponder()
    var ntlmEntropy = NTLMEntropy.system
    var clock: @Sendable () -> Date = { Date() }
    private(set) var fetchesTokens: Bool
    let plans: PreemptivePlans

    init(rules: [AuthRule], credentials: [String: CredentialMaterial], prepared: PreparedCredentials, store: ProtectionSpaceStore,
         plans: PreemptivePlans) {
        self.rules = rules
        self.credentials = credentials
        self.prepared = prepared
        self.store = store
        self.plans = plans
        fetchesTokens = rules.contains { credentials[$0.credentialName]?.oauth2Client != nil }
    }

    func copy() -> AnswererParts {
        let copy = AnswererParts(rules: rules, credentials: credentials, prepared: prepared, store: store, plans: plans)
        copy.digestResponder = digestResponder
        copy.ntlmEntropy = ntlmEntropy
        copy.clock = clock
        copy.fetchesTokens = fetchesTokens
        return copy
    }
}
