/// One Negotiate exchange on one connection (RFC 4559): the first token, a further leg when
/// the server asks for one, and the check of the server's final token (mutual authentication:
/// a server that cannot prove it holds the service key is not the service the ticket is for).
public final class NegotiateHandshake: @unchecked Sendable {
    public enum State: Equatable, Sendable {
        case fresh
        /// A token went out; the server's reply continues or completes the context.
        case tokenSent
        /// The server proved its identity with its final token.
        case verified
    }

    private let context: GSSSecurityContext
    public private(set) var state = State.fresh

    init(context: GSSSecurityContext) {
        self.context = context
    }

    /// The first `Negotiate` answer.
    func start() throws -> String {
        guard state == .fresh else { throw AuthError("a Negotiate handshake starts only once") }
        let token: [UInt8]
        switch try context.step(nil) {
        case .continueWith(let first): token = first
        case .complete(let first?): token = first   // a mechanism without mutual reply (never asked for)
        case .complete(nil): throw AuthError("Kerberos produced no token to send")
        }
        state = .tokenSent
        return "Negotiate " + Base64.encode(token)
    }

    /// The server's token in a challenge (`Negotiate <token>` on a 401/407): the next answer,
    /// or nil when that token completed the context (nothing more to send).
    func answer(challengeToken: String) throws -> String? {
        guard state == .tokenSent else { throw AuthError("a Negotiate token arrived before Countersign sent one") }
        switch try context.step(try decode(challengeToken)) {
        case .continueWith(let next):
            return "Negotiate " + Base64.encode(next)
        case .complete(let last):
            state = .verified
            return last.map { "Negotiate " + Base64.encode($0) }
        }
    }

    /// The final token on the success response (`WWW-Authenticate`/`Proxy-Authenticate:
    /// Negotiate <token>` on a 2xx): must complete the context with mutual authentication.
    /// Without one, the response is taken as is (RFC 4559 lets the server leave it out).
    func verify(finalChallenges: [Challenge]) throws {
        guard state == .tokenSent,
              let token = finalChallenges.first(where: { $0.hasScheme("Negotiate") && $0.token68 != nil })?.token68 else { return }
        switch try context.step(try decode(token)) {
        case .complete:
            state = .verified
        case .continueWith:
            throw AuthError("the server's final Negotiate token did not complete mutual authentication")
        }
    }

    private func decode(_ token: String) throws -> [UInt8] {
        guard let bytes = Base64.decode(token), !bytes.isEmpty else {
            throw AuthError("the server's Negotiate token is not base64")
        }
        return bytes
    }
}
