/// How many answers one client request may draw (SPEC "Answering challenges" 5): `1 +
/// max_failures` in all, whatever realms and schemes the server names, plus one retry for a
/// `stale` Digest nonce. Failures are counted per protection space; this bound is per request,
/// so a server naming a new realm (or scheme) in every 401 cannot turn one request into a
/// stream of replays that carry the password.
public struct AttemptBudget: Sendable, Equatable {
    /// Answers sent so far for this request: preemptive ones and each new handshake (an NTLM
    /// handshake's later legs belong to the attempt that started it).
    public private(set) var answered = 0
    /// `stale=true` retries granted so far.
    public private(set) var staleRetries = 0

    /// One stale nonce is an expired nonce; an endless run is a server drawing requests.
    public static let maxStaleRetries = 1

    public init() {}

    /// Whether one more answer fits, under a rule allowing `maxFailures` rejections.
    public func allowsAnswer(maxFailures: Int) -> Bool {
        answered < limit(maxFailures: maxFailures)
    }

    public func limit(maxFailures: Int) -> Int { 1 + max(1, maxFailures) + staleRetries }

    public mutating func spend() { answered += 1 }

    /// A `stale=true` challenge for the space just answered: one more answer, uncounted as a
    /// failure, granted once per request. False when the one retry is used up.
    public mutating func grantStaleRetry() -> Bool {
        guard staleRetries < Self.maxStaleRetries else { return false }
        staleRetries += 1
        return true
    }
}
