extension AuthOutcome {
    /// Every outcome's spelling (`digest:answered`), made once: /status counts one per
    /// answered request, and building the string each time was a measurable part of its cost.
    private static let spellings: [AuthOutcome: String] = {
        let kinds: [(AuthSchemeName) -> AuthOutcome] = [
            AuthOutcome.answered, AuthOutcome.preemptive, AuthOutcome.rejected, AuthOutcome.notAuthorized,
            AuthOutcome.serverProofMismatch, AuthOutcome.mutualAuthFailed,
        ]
        var table: [AuthOutcome: String] = [.notAttempted: AuthOutcome.notAttempted.description]
        for scheme in AuthSchemeName.allCases {
            for kind in kinds { table[kind(scheme)] = kind(scheme).description }
        }
        return table
    }()

    /// The outcome's spelling, without building it.
    public var spelled: String { Self.spellings[self] ?? description }
}
