import CountersignAuth
import CountersignConfig
import CountersignHTTP
import CountersignSupport

/// The libevent driver of one `Exchange`: it moves bytes between the client and upstream
/// streams, asks the auth rules, and carries out the actions the machine returns. Every
/// decision about what happens next is the machine's (HTTP/Exchange+Transitions.swift); the
/// driver reports events and never looks at the machine's state.
///
/// Its parts: the upstream and the request (ForwardExchange+Request), the response
/// (+Response), held responses verified before release (+Verification), challenges and
/// their answers (+Challenges), answers made off the loop (+Kerberos).
final class ForwardExchange: StreamDelegate, UpstreamConnectDelegate {
    /// The client owns this exchange and outlives it.
    unowned(unsafe) let client: ClientConnection
    /// The worker's context, held here (one retain per exchange) rather than read through
    /// `client`: a class reached through an `unowned(unsafe)` reference is retained around every
    /// call that uses it (the pool, the metrics, the head arrays), and through this `let` of a
    /// `let` it is borrowed.
    let context: WorkerContext
    /// The configuration this exchange started with, whatever reloads happen meanwhile.
    let snapshot: ConfigSnapshot
    var limits: Limits { snapshot.configuration.limits }
    let head: RequestHead
    let target: UpstreamTarget
    /// Where the connection comes from: made (and hashed) once per exchange.
    let key: UpstreamKey
    let path: String
    /// A `let`: read in place, not retained again around each call that writes to it.
    let record: AccessRecord
    var machine: Exchange

    var upstream: UpstreamConnection?
    var requestPump: BodyPump
    /// Reads the response heads and the bodies the machine asks for (forwarded or dropped).
    var responseReader: ResponseReader

    /// Auth, replays, re-signing, held responses, the wait for `100 Continue`: made when an
    /// exchange first needs any of it (ForwardExchange+Occasional.swift).
    var occasional: OccasionalExchangeState?
    /// The client connection's one deadline for response heads, reused by every exchange on
    /// it (no timer allocation per request): from the request's end, or the first response
    /// byte if that comes first, to the final head, however slowly its bytes come. Taken once
    /// (asked of the client each time, it cost some 800 instructions a request).
    let responseDeadline: Deadline

    static let via = ForwardedHeads.via

    init(client: ClientConnection, snapshot: ConfigSnapshot, head: RequestHead, target: UpstreamTarget, path: String, framing: BodyFraming, record: AccessRecord) {
        let context = client.context
        let key = context.upstreamKeys.key(for: target)
        let pump = BodyPump(framing)
        // The client's next requests go on the connection it authenticated, as it expects.
        let clientBound = Self.sendsConnectionBoundAuthorization(head.headers) || client.holdsBoundUpstream(for: key)
        // Read from the head before it moves in: no copy of it is made.
        let request = Exchange.Request(head, framing: framing)
        responseDeadline = client.responseDeadline
        responseReader = ResponseReader(maxHeadBytes: snapshot.configuration.limits.maxHeaderBytes)
        machine = Exchange(request: request, upstream: key.label,
                           clientBound: clientBound,
                           bodyFinished: pump.isFinished, replayLimit: snapshot.configuration.limits.replayBodyBytes,
                           draining: context.draining)
        // Stored last, each at its last use, so that each moves in rather than being copied.
        self.requestPump = pump
        self.client = client
        self.context = context
        self.snapshot = snapshot
        self.head = head
        self.target = target
        self.key = key
        self.path = path
        self.record = record
    }

    /// Whether the request carries an Authorization that binds the connection. Most carry
    /// none: that is answered from the head's set of field names, with no array of values
    /// made (~60 instructions a request). The fields are borrowed: read where the head was,
    /// with `&&` over the head itself, the head was copied whole.
    private static func sendsConnectionBoundAuthorization(_ headers: borrowing HeaderFields) -> Bool {
        headers.contains(.authorization) && ConnectionBoundAuthorization.isPresent(inAuthorization: headers.values(.authorization))
    }

    /// The client's stream stays the client connection's delegate, which passes its events here.
    func start() {
        // Most hosts have no auth rules: nothing is asked of the auth runtime for them.
        if !machine.clientBound, let plan = target.plan, plan.answerer != nil {
            occasionalMade.authenticators[401] = ExchangeAuthenticator.forOrigin(runtime: snapshot.auth, plan: plan, upstream: target, clientHeaders: head.headers,
                                                                                targets: context.authTargets)
        }
        if let parent = target.parent { occasionalMade.authenticators[407] = ExchangeAuthenticator.forParent(runtime: snapshot.auth, parent: parent) }
        // A token that is missing or about to expire is fetched before the request goes.
        var tokenFirst: String?
        if let origin = originAuth, let (credential, oauthClient) = origin.tokenToFetchFirst() {
            pendingToken = (credential, oauthClient, origin.tokenGenerationSeen)
            tokenFirst = credential
        }
        perform(.start(tokenFirst: tokenFirst))
    }

    // MARK: - Carrying out actions

    /// Reports `event` to the machine and carries out what it says.
    func perform(_ event: consuming Exchange.Event) {
        carryOut(machine.handle(event))
    }

    func carryOut(_ action: consuming Exchange.Action) {
        switch consume action {
        case .nothing:
            break
        case .chooseAnswers:
            chooseAnswers()
        case .fetchToken:
            fetchToken()
        case .prepareAnswer:
            prepareKerberos()
        case .acquireUpstream:
            acquireUpstream()
        case .reconnect:
            // A first Kerberos token being made is for the connection that goes now.
            forgetKerberos()
            responseDeadline.end()
            upstream?.close()
            upstream = nil
            acquireUpstream()
        case .sendHead(let ownExpect, let replayKept, let armContinue, let then):
            sendHead(ownExpect: ownExpect, replayKept: replayKept, armContinue: armContinue, then: then)
        case .pumpRequestBody:
            pumpRequest()
        case .armResponseTimer:
            responseDeadline.begin(seconds: limits.headerTimeout)
        case .resumeUpstreamRead:
            upstream?.stream.enableRead()
        case .resumeClientRead:
            client.stream.enableRead()
        case .forwardInterim(let response):
            forwardInterim(response)
        case .releaseBody(let forward):
            continueTimer?.cancel()
            if let forward { forwardInterim(forward) }
            pumpRequest()
        case .decideChallenge(let response):
            decideChallenge(response)
        case .discardChallengeBody(let framing):
            responseReader.expectBody(framing, output: .raw)
            continueDiscarding()
        case .forwardResponse(let response, let framing, let keepAlive, let upstreamEnded):
            finalHeadArrived(response, framing: framing, clientKeepAlive: keepAlive, upstreamEnded: upstreamEnded)
        case .readRestOfBody:
            readRestOfBody()
        case .switchProtocols(let response):
            switchProtocols(response)
        case .finish(let ending):
            end(ending)
        case .fail(let failure, let fate):
            // Before any response byte went to the client: a proxy error answers it.
            client.answer(ProxyError(failure), record: record, closing: fate != .keepAlive)
            end(Exchange.Ending(upstream: .close, client: fate))
        case .abort(let errorType, let fate):
            // After the response started: the only honest signal left is closing the connection.
            if record.error == nil { record.error = errorType }
            if errorType != "client_closed", record.status == 0 { record.status = 502 }
            end(Exchange.Ending(upstream: .close, client: fate))
        }
    }

    // MARK: - The one ending

    /// Every exchange ends here: its timers stop, the upstream goes where `ending` says, and
    /// the client connection takes the record and goes on as `ending` says.
    private func end(_ ending: Exchange.Ending) {
        responseDeadline.end()
        stopOccasionalWaits()
        // Moved out of `upstream` (a copy of it was retained again for each use).
        if let connection = upstream.take() {
            switch ending.upstream {
            // The pool is a `let` of the worker's context, which this exchange holds.
            case .pool: withHeld(context.pool) { $0.put(connection) }
            case .keepBound: client.keepBoundUpstream(connection, for: key)
            case .close: connection.close()
            case .handedToTunnel: break
            }
            if ending.client == .becameTunnel {
                return client.switchToTunnel(upstream: connection, authority: Authority(host: target.host, port: target.port), record: record)
            }
        }
        client.conclude(record, then: ending.client)
    }

    // MARK: - Events from the client connection and timers

    /// The client connection is closing from outside (a drain, a stop).
    func clientClosed() {
        guard !machine.isDone else { return }
        perform(.clientClosed)
    }

    func drainBegan() {
        guard !machine.isDone else { return }
        perform(.drainBegan)
    }

    func responseTimedOut() {
        guard !machine.isDone else { return }
        perform(.responseTimerFired(after: Seconds.text(limits.headerTimeout)))
    }

    // MARK: - Connecting

    func upstreamReady(_ connection: UpstreamConnection) {
        guard !machine.isDone, connection === upstream else {
            connection.close()
            return
        }
        upstream = nil
        connected(connection)
    }

    func upstreamFailed(_ connection: UpstreamConnection, error: ProxyError) {
        guard !machine.isDone, connection === upstream || upstream == nil else { return }
        perform(.upstreamFailed(error.failure))
    }

    // MARK: - Stream callbacks

    func streamReadable(_ stream: Stream) {
        if stream === client.stream { return pumpRequest() }
        switch machine.readMode {
        case .head: readResponseHead()
        case .discard: continueDiscarding()
        case .body: pumpResponse()
        case .none: break
        }
    }

    func streamWritable(_ stream: Stream) {
        guard stream === client.stream else { return pumpRequest() }
        switch machine.readMode {
        case .head: readResponseHead()
        case .body: pumpResponse()
        case .discard, .none: break
        }
    }

    func stream(_ stream: Stream, event: StreamEvent) {
        // A TLS handshake's completion can be reported after the bytes it carried were
        // read (TLS 1.3 client Finished + request in one packet): not an ending.
        if event.connected || machine.isDone { return }
        if stream === client.stream {
            // The client went away, or stopped reading for idle_timeout.
            perform(event.timeout && event.reading ? .clientReadTimedOut : .clientLost)
            return
        }
        guard upstream != nil else { return }
        if event.eof { return upstreamEnded() }
        if event.timeout && event.reading { return perform(.upstreamReadTimedOut) }
        perform(.upstreamBroke(timeout: event.timeout, detail: "\(event)"))
    }
}
