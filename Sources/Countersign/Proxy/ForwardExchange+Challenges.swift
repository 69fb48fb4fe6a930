import CountersignAuth
import CountersignHTTP

/// The auth rules' side of an exchange: preemptive answers, verdicts on challenges, tokens.
extension ForwardExchange {
    /// Whether the answers the next head carries include an NTLM leg (which carries no body).
    var carriesHandshakeLeg: Bool { occasional?.answers.containsValue { $0.isHandshakeLeg } ?? false }

    /// Picks the preemptive answers known before any connection; the machine plans from them
    /// how a body survives a challenge (kept for a replay, or held behind our own `Expect`).
    func chooseAnswers() {
        guard let occasional, !occasional.authenticators.isEmpty else { return perform(.answersChosen(.unauthenticated)) }
        // Each slot by its status: the sequence copied both through generic witnesses.
        choosePreemptiveAnswer(status: 401)
        choosePreemptiveAnswer(status: 407)
        let action = machine.handle(.answersChosen(.authenticated(allKnown: occasional.answers.count == occasional.authenticators.count)))
        if machine.keepsBody, replay == nil { replay = ReplayBuffer(limit: limits.replayBodyBytes) }
        carryOut(action)
    }

    /// Both slots are reached through `occasional` itself (made already when any authenticator
    /// is): the exchange's `authenticators`/`answers` properties copy the pair, retaining both
    /// values, at every read and again to write one back (~300 instructions a Basic request).
    private func choosePreemptiveAnswer(status: Int) {
        guard let occasional, let authenticator = occasional.authenticators[status],
              let preemptive = authenticator.preemptive(requestFacts(status: status), authRequest(bodyReplayable: true, status: status)) else { return }
        occasional.answers[status] = preemptive
        record.auth = .preemptive(preemptive.scheme)
    }

    /// For the origin's 401s the origin connection counts; for the parent's 407s the one to
    /// the parent (TLS for an https parent).
    private func isOverTLS(status: Int) -> Bool { status == 407 ? target.parentHop?.tls != nil : target.tls != nil }

    /// What a fixed preemptive answer needs of the request (`authRequest` is made when more is).
    private func requestFacts(status: Int) -> RequestFacts {
        RequestFacts(method: head.method, target: path, connectionIsTLS: isOverTLS(status: status))
    }

    func authRequest(bodyReplayable: Bool, status: Int = 401) -> AuthRequest {
        let overTLS = isOverTLS(status: status)
        // Made whole in one initializer: setting fields afterwards copied the request each time.
        return AuthRequest(method: head.method, target: path, connectionIsTLS: overTLS, bodyReplayable: bodyReplayable,
                           body: bodyHash,
                           channelBinding: target.tls != nil ? ExchangeAuthenticator.channelBinding(upstream) : nil,
                           gssChannelBinding: target.tls != nil && status == 401 ? ExchangeAuthenticator.gssChannelBinding(upstream) : nil,
                           connection: upstream.map { UpstreamConnectionFacts(authenticatedAs: authenticatedCredential($0)) })
    }

    /// Whom a connection-bound handshake of this configuration authenticated `connection` as.
    private func authenticatedCredential(_ connection: UpstreamConnection) -> String? {
        guard case .credential(let name, let generation)? = connection.key.binding, generation == snapshot.generation else { return nil }
        return name
    }

    /// A first Negotiate token goes once the connection is known: it carries that connection's
    /// certificate (the channel binding), and none goes on one already authenticated.
    func answerOnConnection() {
        // Without auth rules or a parent (`occasional` never made) there is nothing to answer.
        guard occasional != nil else { return }
        answerOnConnection(status: 401)
        answerOnConnection(status: 407)
    }

    private func answerOnConnection(status: Int) {
        guard let occasional, occasional.answers[status] == nil, let authenticator = occasional.authenticators[status],
              !authenticator.hasAnswered else { return }
        if let preemptive = authenticator.preemptive(requestFacts(status: status), authRequest(bodyReplayable: true, status: status)) {
            occasional.answers[status] = preemptive
            record.auth = .preemptive(preemptive.scheme)
        } else if kerberos.pending == nil, let request = authenticator.preemptiveKerberos {
            kerberos.pending = (status, request, .preemptive)
        }
    }

    /// The body's digests for Digest `auth-int`: known once the whole body was kept.
    private var bodyHash: RequestBodyHash {
        if machine.request.framing == .none { return .empty }
        guard machine.bodyFinished, let digests = replay?.digests([.md5, .sha256, .sha512_256]) else { return .unavailable }
        return .known(digests)
    }

    /// Asks the auth rules about a challenge and feeds their verdict to the machine.
    func decideChallenge(_ response: ResponseHead) {
        guard let auth = authenticators[response.status] else {
            return perform(.challengeDecided(.passThrough, on: response))
        }
        let verdict: Exchange.ChallengeVerdict
        switch auth.decide(on: response, request: authRequest(bodyReplayable: machine.bodyReplayable, status: response.status)) {
        case .answer(let next):
            answers[response.status] = next
            record.auth = .answered(next.scheme)
            if let why = next.fallbackReason { record.authFallback = why }
            verdict = .answer(bindsConnection: next.continuesHandshake, handshakeLeg: carriesHandshakeLeg)
        case .passThrough(let reason):
            if auth.skippedLockedOutSpace { record.auth = .blocked }
            context.log.debug("challenge passed to the client", [("host", .string(target.host)), ("reason", .string(reason))])
            verdict = .passThrough
        case .fail(let reason):
            verdict = .fail(reason: reason)
        case .fetchToken(let credential, let oauthClient):
            pendingToken = (credential, oauthClient, auth.tokenGenerationSeen)
            verdict = .fetchToken(credential: credential)
        case .prepareKerberos(let request):
            kerberos.pending = (response.status, request, .challenge)
            verdict = .prepareAnswer
        }
        perform(.challengeDecided(verdict, on: response))
    }

    /// Fetches (or joins the fetch of) a token, keeps it for every exchange of this snapshot,
    /// then goes on; a failing token endpoint fails the exchange with a 502 naming it.
    func fetchToken() {
        guard let (credential, oauthClient, seen) = pendingToken else { return }
        snapshot.auth.tokenFlights.token(for: credential, client: oauthClient, seen: seen, context: context, snapshot: snapshot) { [weak self] result in
            guard let self, !self.machine.isDone else { return }
            switch result {
            case .success:
                // The flight stored the token for every exchange; the authenticators take it up.
                self.perform(.tokenArrived)
            case .failure(let error):
                self.perform(.tokenFailed(error.failure))
            }
        }
    }
}
