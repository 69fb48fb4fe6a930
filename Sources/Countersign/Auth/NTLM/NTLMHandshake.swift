import CountersignSupport

/// NTLM's three legs on one connection: NEGOTIATE sent → CHALLENGE received → AUTHENTICATE sent.
/// One value per upstream connection; the connection stays bound to this credential afterwards.
public struct NTLMHandshake: Sendable {
    public enum State: Equatable, Sendable {
        case idle
        case negotiateSent
        case authenticateSent
    }

    public private(set) var state: State = .idle
    private var negotiateMessage: [UInt8] = []
    private let negotiate: NTLMNegotiate

    public init(flags: NTLMFlags = .clientDefault) {
        negotiate = NTLMNegotiate(flags: flags)
    }

    /// The first leg's header value, `NTLM <base64 NEGOTIATE_MESSAGE>`.
    public mutating func start() -> String {
        negotiateMessage = negotiate.encode()
        state = .negotiateSent
        return "NTLM " + Base64.encode(negotiateMessage)
    }

    /// The third leg's header value, answering the server's `NTLM <base64 CHALLENGE_MESSAGE>` token.
    public mutating func answer(challengeToken: String, with builder: NTLMAuthenticateBuilder) throws -> String {
        guard state == .negotiateSent else {
            throw AuthError("an NTLM challenge arrived out of order (no NEGOTIATE_MESSAGE was sent on this connection)")
        }
        guard let bytes = Base64.decode(challengeToken) else {
            throw AuthError("the NTLM server's challenge token is not valid base64")
        }
        let challenge = try NTLMChallengeMessage.parse(bytes)
        let authenticate = try builder.build(negotiate: negotiateMessage, negotiatedFlags: negotiate.flags, challenge: challenge)
        state = .authenticateSent
        return "NTLM " + Base64.encode(authenticate)
    }
}
