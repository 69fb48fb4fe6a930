extension AuthOutcome {
    /// Every outcome's spelling (`digest:answered`), made once and found by `ordinal`: /status
    /// counts one per answered request, and building the string each time was a measurable
    /// part of its cost.
    private static let spellings: [String] = all.map(\.description)

    /// The outcome's spelling, without building it.
    public var spelled: String { Self.spellings[ordinal] }

    /// Every outcome, in the order of `ordinal`: a counter per outcome can be an array slot.
    public static let all: [AuthOutcome] = [.notAttempted] + kinds.flatMap { kind in AuthSchemeName.allCases.map(kind) }

    private static let kinds: [(AuthSchemeName) -> AuthOutcome] = [
        AuthOutcome.answered, AuthOutcome.preemptive, AuthOutcome.rejected, AuthOutcome.notAuthorized,
        AuthOutcome.serverProofMismatch, AuthOutcome.mutualAuthFailed,
    ]

    /// The outcome's place in `all`, without hashing it.
    public var ordinal: Int {
        let schemes = AuthSchemeName.allCases.count
        switch self {
        case .notAttempted: return 0
        case .answered(let scheme): return 1 + scheme.ordinal
        case .preemptive(let scheme): return 1 + schemes + scheme.ordinal
        case .rejected(let scheme): return 1 + 2 * schemes + scheme.ordinal
        case .notAuthorized(let scheme): return 1 + 3 * schemes + scheme.ordinal
        case .serverProofMismatch(let scheme): return 1 + 4 * schemes + scheme.ordinal
        case .mutualAuthFailed(let scheme): return 1 + 5 * schemes + scheme.ordinal
        }
    }
}

extension AuthSchemeName {
    /// The scheme's place in `allCases`.
    var ordinal: Int {
        switch self {
        case .basic: return 0
        case .digest: return 1
        case .ntlm: return 2
        case .negotiate: return 3
        case .bearer: return 4
        }
    }
}
