extension Exchange {
    /// The auth rules' verdict on a challenge: answered on this connection or a new one,
    /// passed to the client, or failed.
    mutating func challengeDecided(_ verdict: ChallengeVerdict, on response: ResponseHead) -> Action {
        switch state {
        case .awaitingHead(var attempt):
            switch verdict {
            case .passThrough:
                return finalHead(response)
            case .fail(let reason):
                return fail(Failure(.proxyConfigurationError, details: reason))
            case .answer(let binds, let handshakeLeg):
                attempt.bindsConnection = binds
                return discard(response, attempt: attempt, then: .sendAgain(handshakeLeg: handshakeLeg))
            case .fetchToken(let credential):
                return discard(response, attempt: attempt, then: .fetchToken(credential: credential, challenge: response))
            case .prepareAnswer:
                // The challenge stays unread: if no answer comes of it, it goes to the client whole.
                state = .preparingAnswer(attempt, challenge: response)
                return .prepareAnswer
            }
        case .fetchingToken(let credential, _, let reusable):
            // Asked again after the token came: the 401's body is gone, so it cannot be shown.
            switch verdict {
            case .answer(let binds, let handshakeLeg):
                var attempt = Attempt()
                attempt.bindsConnection = binds
                return retry(attempt, reusable: reusable, handshakeLeg: handshakeLeg)
            case .fail(let reason):
                return fail(Failure(.proxyConfigurationError, details: reason))
            case .fetchToken, .passThrough, .prepareAnswer:
                return fail(Failure(.proxyConfigurationError, details: "the OAuth2 token for credential \(credential) was not accepted"))
            }
        default:
            unexpected(.challengeDecided(verdict, on: response))
        }
    }

    private mutating func discard(_ response: ResponseHead, attempt: Attempt, then: AfterDiscard) -> Action {
        let free = !attempt.upstreamEnded && (body.finished || !attempt.carriesBody)
        switch ChallengeBody.disposal(of: response, requestMethod: request.method, connectionFree: free) {
        case .leaveWithConnection:
            return afterDiscard(then, attempt: attempt, reusable: false)
        case .discard(let framing):
            state = .discardingChallenge(attempt, then: then)
            return .discardChallengeBody(framing)
        }
    }

    /// The challenge's body was read and dropped: the connection can carry the next attempt.
    mutating func challengeBodyDiscarded() -> Action {
        guard case .discardingChallenge(let attempt, let then) = state else { unexpected(.challengeBodyDiscarded) }
        return afterDiscard(then, attempt: attempt, reusable: true)
    }

    private mutating func afterDiscard(_ then: AfterDiscard, attempt: Attempt, reusable: Bool) -> Action {
        switch then {
        case .sendAgain(let handshakeLeg):
            return retry(attempt, reusable: reusable, handshakeLeg: handshakeLeg)
        case .fetchToken(let credential, let challenge):
            state = .fetchingToken(credential: credential, challenge: challenge, reusable: reusable)
            return .fetchToken
        }
    }

    /// The next attempt: on this connection when it can carry it (the head goes at once),
    /// else a new one (a bound handshake cannot move: it belongs to one connection).
    private mutating func retry(_ attempt: Attempt, reusable: Bool, handshakeLeg: Bool) -> Action {
        var next = Attempt()
        next.bindsConnection = attempt.bindsConnection
        if reusable {
            next.reusedConnection = attempt.reusedConnection
            return sendHead(next, handshakeLeg: handshakeLeg)
        }
        if attempt.bindsConnection {
            return fail(Failure(.httpProtocolError, details: "\(upstreamName) closed the connection during a connection-bound (NTLM, Negotiate) handshake"))
        }
        state = .connecting(next)
        return .reconnect
    }
}
