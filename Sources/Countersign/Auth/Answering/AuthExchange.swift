/// Per-exchange state of the answering state machine: what was sent, how often it was rejected,
/// and the NTLM handshake of the connection the exchange is bound to.
public struct AuthExchange: Sendable, CustomStringConvertible {
    /// What the last answer was, read again when its response comes: an object, so that the
    /// exchange's copies and readers take one reference, not each field. It holds nothing of
    /// one answer alone (a Digest answer's session and proof are `DigestSent`), so a preemptive
    /// candidate's record is shared by its answers for one resource (`PreemptiveCandidate.sent`).
    final class Sent: Sendable {
        /// Where the answer went and by which rule: one object a preemptive candidate's records
        /// share (copying both into each record and releasing them again was ~10 reference
        /// counts and ~300 instructions a Digest request).
        let spaceAndRule: SpaceAndRule
        var space: ProtectionSpace { spaceAndRule.space }
        var rule: AuthRule { spaceAndRule.rule }
        let preemptive: Bool
        /// The request the answer went with: what the server accepts or refuses it for.
        let resource: ResourceKey
        /// Where the preemptive plan's candidate the answer came from notes what it was
        /// accepted on (nil for an answer to a challenge).
        let acceptance: AcceptanceMemo?

        convenience init(space: ProtectionSpace, rule: AuthRule, preemptive: Bool, resource: ResourceKey) {
            self.init(spaceAndRule: SpaceAndRule(space: space, rule: rule), preemptive: preemptive, resource: resource)
        }

        init(spaceAndRule: SpaceAndRule, preemptive: Bool, resource: ResourceKey, acceptance: AcceptanceMemo? = nil) {
            self.spaceAndRule = spaceAndRule
            self.preemptive = preemptive
            self.resource = resource
            self.acceptance = acceptance
        }
    }

    /// What a Digest answer went with, held in the exchange itself: a new record object per
    /// answer cost its allocation, ~30 reference counts and its release (~600 instructions).
    struct DigestSent: Sendable {
        let session: DigestSession
        let proof: DigestProof?
        /// Where the session goes back once answered, when it came off a candidate's shelf.
        let shelf: DigestSessionShelf?
    }

    /// A protection space and the rule that answers it, together.
    final class SpaceAndRule: Sendable {
        let space: ProtectionSpace
        let rule: AuthRule

        init(space: ProtectionSpace, rule: AuthRule) {
            self.space = space
            self.rule = rule
        }
    }

    private(set) var sent: Sent?
    /// The Digest session and proof of the answer `sent` records, when it was a Digest answer.
    private(set) var digestSent: DigestSent?
    /// Rejected answers per protection space (`max_failures` is per space).
    var failures: [ProtectionSpace: Int] = [:]
    /// Answers in all, whatever the space (`1 + max_failures` per client request).
    public internal(set) var budget = AttemptBudget()
    var awaitingToken = false
    var tokenRefetched = false
    /// A space that was offered but is locked out, so it went unanswered.
    public internal(set) var skippedLockedOut: ProtectionSpace?
    /// The answer was refused for a resource the credential may not see, in a space where it
    /// was accepted for others: the 401 goes to the client and nothing is counted.
    public internal(set) var refusedAsNotAuthorized = false
    public internal(set) var ntlm: NTLMHandshake?
    /// The Negotiate context of the connection this exchange is bound to.
    public internal(set) var negotiate: NegotiateHandshake?
    /// A first Negotiate token made off the loop, waiting for the scheme to take it.
    public internal(set) var preparedNegotiate: PreparedNegotiate?
    /// What a preemptive Negotiate answer is waiting for (no answer went: the token is made first).
    public internal(set) var preemptiveKerberos: KerberosRequest?
    /// Why the server's final Negotiate token did not prove its identity, when it did not:
    /// the response must not reach the client.
    public internal(set) var mutualAuthFailure: String?
    /// The server challenged a connection already authenticated as this credential.
    var rechallengedAuthenticatedConnection = false

    public init() {}

    /// Records the answer that goes, with its Digest session and proof when it is one: set
    /// together, so no record outlives the answer it was made for.
    mutating func record(_ sent: Sent, digest: consuming DigestSent?) {
        self.sent = sent
        digestSent = digest
    }

    /// The same for an answer that is not Digest's (the Digest record is only written when
    /// there is one to clear: a Basic answer ahead is the usual first and only answer).
    mutating func record(_ sent: Sent) {
        self.sent = sent
        if digestSent != nil { digestSent = nil }
    }

    /// The first token made off the loop for the request a scheme asked for; the exchange
    /// then asks again (`respond` with the same response, or `preemptiveAnswer`).
    public mutating func adopt(_ prepared: PreparedNegotiate) {
        preparedNegotiate = prepared
        preemptiveKerberos = nil
    }

    /// The scheme last answered in this exchange, if any.
    public var answeredScheme: AuthSchemeName? { sent?.space.scheme }

    /// Names the space only: the exchange holds Digest's H(A1), which must never be printed.
    public var description: String { sent.map { "auth exchange answered in \($0.space)" } ?? "auth exchange, nothing sent" }
}
