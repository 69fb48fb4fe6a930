import CountersignAuth

/// What only some exchanges need: challenge answering (hosts with `auth` rules, a parent
/// proxy), a token or a Kerberos ticket fetched first, a body kept for a replay or re-signed,
/// a response held until it verifies, the wait for `100 Continue`. One object, made when the
/// first of it is set: a plain forwarded request allocates, fills and destroys none of it.
final class OccasionalExchangeState {
    // Challenge answering, by the status that challenges: 401 for the origin (hosts with
    // `auth` rules), 407 for the parent proxy when plain requests go through it.
    var authenticators = ByChallenge<ExchangeAuthenticator>()
    /// The answers the current attempt carries, by the status they answer.
    var answers = ByChallenge<AuthAnswer>()
    /// The token to fetch, and the token generation its authenticator saw (a newer token is taken as it is).
    var pendingToken: (credential: String, client: OAuth2Client, seen: Int)?
    /// A first Kerberos token made off the loop (ForwardExchange+Kerberos.swift).
    var kerberos = KerberosWait()
    /// A response from a `verify_responses` host, held until it verifies.
    var heldResponse: HeldResponse?
    /// A copy of the body sent so far, for a replay after a 401.
    var replay: ReplayBuffer?
    /// This attempt's re-signing of an aws-chunked body (aws-sigv4 hosts).
    var chunkStage: ChunkResigningStage?
    // Timers are made when first armed, owned here and freed with the exchange, so they
    // never call a freed one.
    var kerberosTimer: Timer?
    var continueTimer: Timer?

    deinit { kerberos.job?.cancel() }
}

/// The occasional state read as the exchange's own: nothing is made to read it, and it is
/// made when first written.
extension ForwardExchange {
    /// The occasional state, made now if it was not: written through this, a slot of a pair is
    /// set in place (a write through `authenticators` or `answers` copies the pair out and back).
    var occasionalMade: OccasionalExchangeState {
        if let occasional { return occasional }
        let made = OccasionalExchangeState()
        occasional = made
        return made
    }

    var authenticators: ByChallenge<ExchangeAuthenticator> {
        get { occasional?.authenticators ?? ByChallenge() }
        set { occasionalMade.authenticators = newValue }
    }

    var answers: ByChallenge<AuthAnswer> {
        get { occasional?.answers ?? ByChallenge() }
        set { occasionalMade.answers = newValue }
    }

    var originAuth: ExchangeAuthenticator? { occasional?.authenticators[401] }

    var pendingToken: (credential: String, client: OAuth2Client, seen: Int)? {
        get { occasional?.pendingToken }
        set { occasionalMade.pendingToken = newValue }
    }

    var kerberos: KerberosWait {
        get { occasional?.kerberos ?? KerberosWait() }
        set { occasionalMade.kerberos = newValue }
    }

    var heldResponse: HeldResponse? {
        get { occasional?.heldResponse }
        set { occasionalMade.heldResponse = newValue }
    }

    var replay: ReplayBuffer? {
        get { occasional?.replay }
        set { occasionalMade.replay = newValue }
    }

    var chunkStage: ChunkResigningStage? {
        get { occasional?.chunkStage }
        set { occasionalMade.chunkStage = newValue }
    }

    var kerberosTimer: Timer? {
        get { occasional?.kerberosTimer }
        set { occasionalMade.kerberosTimer = newValue }
    }

    var continueTimer: Timer? {
        get { occasional?.continueTimer }
        set { occasionalMade.continueTimer = newValue }
    }

    /// A Kerberos token asked or being made is no longer wanted (there is none to forget
    /// when nothing occasional was ever needed).
    func forgetKerberos() {
        occasional?.kerberos.forget()
    }

    /// The timers stop, and no Kerberos token is waited for: the exchange has ended.
    func stopOccasionalWaits() {
        guard let occasional else { return }
        occasional.continueTimer?.cancel()
        occasional.kerberosTimer?.cancel()
        occasional.kerberos.forget()
    }
}
