/// Per-exchange state of the answering state machine: what was sent, how often it was rejected,
/// and the NTLM handshake of the connection the exchange is bound to.
public struct AuthExchange: Sendable, CustomStringConvertible {
    struct Sent: Sendable {
        var space: ProtectionSpace
        var rule: AuthRule
        var preemptive: Bool
        var digestSession: DigestSession?
        var digestProof: DigestProof?
    }

    var sent: Sent?
    var failures: [ProtectionSpace: Int] = [:]
    var awaitingToken = false
    /// `stale=true` answers so far: one is a nonce that expired, an endless run is a server
    /// that would otherwise draw a burst of requests.
    var staleRetries = 0
    var tokenRefetched = false
    public internal(set) var ntlm: NTLMHandshake?

    public init() {}

    /// The scheme last answered in this exchange, if any.
    public var answeredScheme: AuthSchemeName? { sent?.space.scheme }

    /// Names the space only: the exchange holds Digest's H(A1), which must never be printed.
    public var description: String { sent.map { "auth exchange answered in \($0.space)" } ?? "auth exchange, nothing sent" }
}
