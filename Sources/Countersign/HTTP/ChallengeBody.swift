/// What becomes of an answered challenge's body (an origin's `401`, a parent proxy's `407`,
/// to a request or to a `CONNECT`) before the answer goes: one rule for every challenger, as
/// curl reads a proxy's challenge like a server's.
public enum ChallengeBody: Equatable, Sendable {
    /// Read by its framing and dropped (streamed, never held; bounded in time by the answer's
    /// header_timeout); the connection then carries the retry.
    case discard(BodyFraming)
    /// The connection cannot carry the retry: it closes (keep-alive off, or the body runs
    /// until it does, or its framing is invalid) and the retry goes on a new one.
    case leaveWithConnection

    /// `connectionFree`: nothing else holds the connection (the upstream did not end, no
    /// request body is still going up it).
    public static func disposal(of response: ResponseHead, requestMethod: String, connectionFree: Bool) -> ChallengeBody {
        guard connectionFree, response.allowsKeepAlive,
              let framing = try? BodyFraming.forResponse(response, requestMethod: requestMethod),
              framing != .untilClose else { return .leaveWithConnection }
        return .discard(framing)
    }
}
