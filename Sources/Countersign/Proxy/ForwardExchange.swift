import CLibevent
import CountersignAuth
import CountersignConfig
import CountersignHTTP
import CountersignSigning

/// The libevent driver of one `Exchange`: it moves bytes between the client and upstream
/// streams, asks the auth rules, and carries out the actions the machine returns. Every
/// decision about what happens next is the machine's (HTTP/Exchange.swift).
final class ForwardExchange: StreamDelegate, UpstreamConnectDelegate {
    /// The client owns this exchange and outlives it.
    private unowned(unsafe) let client: ClientConnection
    private var context: WorkerContext { client.context }
    /// The configuration this exchange started with, whatever reloads happen meanwhile.
    let snapshot: ConfigSnapshot
    private var limits: Limits { snapshot.configuration.limits }
    private let head: RequestHead
    private let target: UpstreamTarget
    private var key: UpstreamKey { target.key }
    private let path: String
    private var record: AccessRecord
    private var machine: Exchange

    private var upstream: UpstreamConnection?
    private var requestPump: BodyPump
    private var responseReader = BufferedHeadReader(.response)
    private var responsePump: BodyPump?
    private var discardPump: BodyPump?

    // Challenge answering, by the status that challenges: 401 for the origin (hosts with
    // `auth` rules), 407 for the parent proxy when plain requests go through it.
    private var authenticators: [Int: ExchangeAuthenticator] = [:]
    /// The answers the current attempt carries, by the status they answer.
    private var answers: [Int: AuthAnswer] = [:]
    private var originAuth: ExchangeAuthenticator? { authenticators[401] }
    /// The OAuth2 credential whose token is being fetched.
    /// The token to fetch, and the token generation its authenticator saw (a newer token is taken as it is).
    private var pendingToken: (credential: String, client: OAuth2Client, seen: Int)?
    /// The first Kerberos token being made off the loop, and for which status's authenticator.
    private var pendingKerberos: (status: Int, request: KerberosRequest)?
    /// The KDC job making it: cancelled when this exchange stops waiting for it, so a job for
    /// a client that left never holds a place in the queue or a KDC thread.
    private var kerberosJob: KDCJob?
    /// Numbers each such request: a result for an earlier one (the connection changed) is dropped.
    private var kerberosRequests = 0
    /// The upstream closed while a first token was being made (its challenge is still here).
    private var upstreamEndedWhilePreparing = false
    /// A preemptive answer was just made off the loop for the attached connection.
    private var resumingPreparedAnswer = false
    /// A response from a `verify_responses` host, held until it verifies.
    private var heldResponse: HeldResponse?
    /// A copy of the body sent so far, for a replay after a 401.
    private var replay: ReplayBuffer?
    // Timers are owned here and die with the exchange, so they never call a freed one.
    private lazy var kerberosTimer = Timer(base: context.base) { [unowned self] in self.kerberosWaitExpired() }
    private lazy var continueTimer = Timer(base: context.base) { [unowned self] in self.perform(self.machine.continueTimerFired()) }
    /// The client connection's one deadline for response heads, reused by every exchange on
    /// it (no timer allocation per request): from the request's end, or the first response
    /// byte if that comes first, to the final head, however slowly its bytes come.
    private var responseDeadline: Deadline { client.responseDeadline }

    static let via = ForwardedHeads.via

    deinit { kerberosJob?.cancel() }

    init(client: ClientConnection, snapshot: ConfigSnapshot, head: RequestHead, target: UpstreamTarget, path: String, framing: BodyFraming, record: AccessRecord) {
        self.client = client
        self.snapshot = snapshot
        self.head = head
        self.target = target
        self.path = path
        self.record = record
        let pump = BodyPump(framing)
        self.requestPump = pump
        let clientBound = ConnectionBoundAuthorization.isPresent(inAuthorization: head.headers.values("Authorization"))
        machine = Exchange(request: Exchange.Request(head, framing: framing), upstreamName: target.key.description, clientBound: clientBound, bodyFinished: pump.isFinished)
    }

    private var finished: Bool { machine.isDone }

    func start() {
        client.stream.delegate = self
        let runtime = snapshot.auth
        // The client's next requests go on the connection it authenticated, as it expects.
        if client.holdsBoundUpstream(for: key) { machine.clientHoldsBoundConnection() }
        if !machine.clientBound {
            authenticators[401] = ExchangeAuthenticator.forOrigin(runtime: runtime, host: target.entry, upstream: target, clientHeaders: head.headers)
        }
        if let parent = target.parent { authenticators[407] = ExchangeAuthenticator.forParent(runtime: runtime, parent: parent) }
        // A token that is missing or about to expire is fetched before the request goes.
        if let origin = originAuth, let (credential, oauthClient) = origin.tokenToFetchFirst() {
            pendingToken = (credential, oauthClient, origin.tokenGenerationSeen)
        }
        if pendingToken == nil { prepareAuthentication() }
        perform(machine.start(tokenFirst: pendingToken?.credential))
    }

    /// Picks a preemptive answer and decides how a body can survive a challenge: kept for
    /// replay when small enough, else held behind `Expect: 100-continue` while no answer is
    /// known, so the challenge comes before the body.
    private func prepareAuthentication() {
        guard !authenticators.isEmpty else { return }
        for (status, authenticator) in authenticators {
            if let preemptive = authenticator.preemptive(authRequest(bodyReplayable: true, status: status)) {
                answers[status] = preemptive
                record.auth = "\(preemptive.scheme):preemptive"
            }
        }
        switch machine.request.framing {
        case .none:
            break
        case .contentLength(let length) where length <= UInt64(limits.replayBodyBytes):
            replay = ReplayBuffer(limit: limits.replayBodyBytes)
            machine.prepareBody(keep: true, hold: false)
        default:
            machine.prepareBody(keep: false, hold: answers.count < authenticators.count)
        }
    }

    /// For the origin's 401s the origin connection counts; for the parent's 407s the one to
    /// the parent (TLS for an https parent).
    private func authRequest(bodyReplayable: Bool, status: Int = 401) -> AuthRequest {
        let overTLS = status == 407 ? target.parentHop?.tls != nil : target.tls != nil
        var request = AuthRequest(method: head.method, target: path, connectionIsTLS: overTLS, bodyReplayable: bodyReplayable,
                                  body: bodyHash,
                                  channelBinding: target.tls != nil ? ExchangeAuthenticator.channelBinding(upstream) : nil)
        request.gssChannelBinding = target.tls != nil && status == 401 ? ExchangeAuthenticator.gssChannelBinding(upstream) : nil
        request.connection = upstream.map { UpstreamConnectionFacts(authenticatedAs: authenticatedCredential($0)) }
        return request
    }

    /// Whom a connection-bound handshake of this configuration authenticated `connection` as.
    private func authenticatedCredential(_ connection: UpstreamConnection) -> String? {
        guard case .credential(let name, let generation)? = connection.key.binding, generation == snapshot.generation else { return nil }
        return name
    }

    /// A first Negotiate token goes once the connection is known: it carries that connection's
    /// certificate (the channel binding), and none goes on one already authenticated.
    private func answerOnConnection() {
        for (status, authenticator) in authenticators where answers[status] == nil && !authenticator.hasAnswered {
            if let preemptive = authenticator.preemptive(authRequest(bodyReplayable: true, status: status)) {
                answers[status] = preemptive
                record.auth = "\(preemptive.scheme):preemptive"
            } else if pendingKerberos == nil, let request = authenticator.preemptiveKerberos {
                pendingKerberos = (status, request)
            }
        }
    }

    /// The body's digests for Digest `auth-int`: known once the whole body was kept.
    private var bodyHash: RequestBodyHash {
        if machine.request.framing == .none { return .empty }
        guard machine.body.finished, let digests = replay?.digests([.md5, .sha256, .sha512_256]) else { return .unavailable }
        return .known(digests)
    }

    // MARK: - Carrying out actions

    private func perform(_ action: Exchange.Action) {
        switch action {
        case .nothing:
            break
        case .fetchToken:
            fetchToken()
        case .prepareAnswer:
            prepareKerberos()
        case .acquireUpstream:
            acquireUpstream()
        case .reconnect:
            // A first Kerberos token being made is for the connection that goes now.
            pendingKerberos = nil
            kerberosRequests += 1
            kerberosJob?.cancel()
            upstreamEndedWhilePreparing = false
            responseDeadline.end()
            upstream?.close()
            upstream = nil
            acquireUpstream()
        case .resend:
            responseDeadline.end()
            if let upstream { connected(upstream) }
        case .sendHead(let ownExpect, let replayKept, let armContinue, let then):
            sendHead(ownExpect: ownExpect, replayKept: replayKept, armContinue: armContinue, then: then)
        case .pumpRequestBody:
            pumpRequest()
        case .armResponseTimer:
            responseDeadline.begin(seconds: limits.headerTimeout)
        case .forwardInterim(let response):
            forwardInterim(response)
        case .releaseBody(let forward):
            continueTimer.cancel()
            if let forward { forwardInterim(forward) }
            pumpRequest()
        case .decideChallenge(let response):
            decideChallenge(response)
        case .discardChallengeBody(let framing):
            discardPump = BodyPump(framing)
            continueDiscarding()
        case .forwardResponse(let response, let framing, let keepAlive):
            finalHeadArrived(response, framing: framing, clientKeepAlive: keepAlive)
        case .switchProtocols(let response):
            switchProtocols(response)
        case .finish(let disposition, let clientKeepAlive):
            finish(disposition, clientKeepAlive: clientKeepAlive)
        case .fail(let failure):
            failBeforeResponse(ProxyError(failure))
        case .abort(let errorType):
            abort(errorType)
        }
    }

    // MARK: - Upstream connection

    private func acquireUpstream() {
        if machine.clientBound, let own = client.takeBoundUpstream(for: key) {
            context.metrics.upstreamReuses.add()
            connected(own)
            return
        }
        // A connection a binding scheme (NTLM, Negotiate) already authenticated for this
        // credential (with the origin, or with the parent proxy) needs no new handshake.
        for status in [401, 407] {
            if let credential = authenticators[status]?.connectionBindingCredential,
               let bound = context.pool.take(key.bound(to: .credential(credential, generation: snapshot.generation))) {
                context.metrics.upstreamReuses.add()
                connected(bound)
                return
            }
        }
        if let pooled = context.pool.take(key) {
            context.metrics.upstreamReuses.add()
            connected(pooled)
            return
        }
        // Plain requests through a parent go to it; TLS ones are tunnelled through it.
        let endpoint = target.parent.map { ($0.host, $0.port) } ?? (target.host, target.port)
        guard let connection = UpstreamConnection.open(host: endpoint.0, port: endpoint.1, tls: target.tls, via: target.parentHop,
                                                       forwarding: target.parent != nil, snapshot: snapshot, context: context, delegate: self) else {
            let error = UpstreamConnection.cannotOpen("\(key)")
            perform(machine.upstreamFailed(error.failure))
            return
        }
        if !finished { upstream = connection }
    }

    /// Until the final response head, the upstream is read up to max_header_bytes: a head with
    /// large cookies or CSP must not stall at the body's read-ahead (and so meet its size
    /// limit, not header_timeout). From the final head on, only `responseReadAhead` is read
    /// ahead of a slow client.
    private var headReadLimit: Int { max(context.responseReadAhead, limits.maxHeaderBytes) }

    private func connected(_ connection: UpstreamConnection) {
        if connection !== upstream {
            upstream = connection
            if machine.clientBound { connection.key.binding = .client }
            connection.stream.delegate = self
            connection.stream.setWatermarks(readHigh: headReadLimit, writeBudget: context.bufferBudget)
            connection.stream.setTimeouts(read: limits.idleTimeout, write: limits.idleTimeout)
            connection.stream.enableReadWrite()
            if !machine.clientBound { answerOnConnection() }
        } else if resumingPreparedAnswer {
            resumingPreparedAnswer = false
            answerOnConnection()
        }
        // A preemptive first Kerberos token is made off the loop before the head goes.
        if pendingKerberos != nil {
            perform(machine.preparingFirstAnswer())
            return
        }
        perform(machine.upstreamConnected(reused: connection.reused, handshakeLeg: answers.values.contains { $0.isHandshakeLeg }))
    }

    private func sendHead(ownExpect: Bool, replayKept: Bool, armContinue: Bool, then: Exchange.AfterHead) {
        guard let upstream else { return }
        // A connection a binding scheme authenticates stays with that credential, in the pool too.
        if !machine.clientBound, let answer = [401, 407].lazy.compactMap({ self.answers[$0] }).first(where: \.bindsConnection) {
            upstream.key = key.bound(to: .credential(answer.credentialName, generation: snapshot.generation))
        }
        // Through a parent proxy, plain requests keep their absolute form.
        let requestTarget = target.parent == nil ? path : "http://\(target.hostField)\(path)"
        // Most exchanges carry no answer: no array is built for them.
        let answerFields = answers.isEmpty ? [] : answers.values.map { (name: $0.headerName, value: $0.value.bytes) }
        var headBytes = ForwardedHeads.request(head, framing: machine.request.framing, target: requestTarget, hostField: target.hostField,
                                               answers: answerFields,
                                               handshakeLeg: answers.values.contains { $0.isHandshakeLeg }, ownExpect: ownExpect)
        // Signed last, over the head exactly as it goes, and anew for every attempt.
        if let signer = target.entry.flatMap({ snapshot.signers[$0.pattern] }) {
            do {
                headBytes = try signer.sign(head: headBytes, scheme: target.scheme, authority: target.hostField, originTarget: path,
                                            now: Int64(time(nil)))
                record.signed = true
            } catch let error as SignatureError {
                // What the request itself holds (a field a component reads that is not valid) is the client's to fix.
                switch error {
                case .invalidComponent, .missingComponent:
                    failBeforeResponse(ProxyError(.httpRequestError(status: 400), details: "cannot sign this request for \(target.hostField): \(error)"))
                default:
                    failBeforeResponse(ProxyError(.proxyInternalError, details: "cannot sign the request to \(target.hostField): \(error)"))
                }
                return
            } catch {
                failBeforeResponse(ProxyError(.proxyInternalError, details: "cannot sign the request to \(target.hostField): \(error)"))
                return
            }
        }
        upstream.stream.write(headBytes)
        // A replay first sends again what was already sent, then the rest as it arrives.
        if replayKept, let output = upstream.stream.output { replay?.replay(into: output) }
        if armContinue { continueTimer.arm(seconds: 1) }
        switch then {
        case .armResponseTimer: responseDeadline.begin(seconds: limits.headerTimeout)
        case .pumpRequestBody: pumpRequest()
        case .waitForContinue: break
        }
    }

    // MARK: - Request body

    private func pumpRequest() {
        guard machine.mayPumpRequestBody, discardPump == nil, let upstream,
              let source = client.stream.input, let destination = upstream.stream.output else { return }
        let before = requestPump.bytesMoved
        let progress: BodyPump.Progress
        if let replay, replay.isComplete, let staging = context.staging {
            // Through a staging buffer, so what goes upstream is also kept for a replay.
            progress = requestPump.pump(from: source, to: staging, room: upstream.stream.writeRoom)
            replay.keepCopy(of: staging)
            staging.moveAll(to: destination)
        } else {
            progress = requestPump.pump(from: source, to: destination, room: upstream.stream.writeRoom)
        }
        record.countRequestBody(requestPump.bytesMoved - before)
        if requestPump.bytesMoved > 0 { machine.requestBodyProgressed(keptWhole: replay?.isComplete ?? false) }
        switch progress {
        case .waiting:
            break
        case .finished:
            perform(machine.requestBodyFinished())
        case .failed(let error):
            let bad = ProxyError.badRequest(error)
            perform(machine.requestBodyInvalid(bad.failure))
        }
    }

    // MARK: - Response

    private func readResponseHead() {
        guard let upstream else { return }
        while case .awaitingHead = machine.state {
            // Interim responses go to the client only as fast as it reads them (a flood of
            // 1xx to a client that does not read); the upstream waits, its input bounded.
            guard client.stream.writeRoom > 0 else { return }
            guard upstream.stream.inputLength > 0, let input = upstream.stream.input else { return }
            machine.responseBytesArrived()
            // A head that starts while the request body is still uploading is due all the same.
            responseDeadline.begin(seconds: limits.headerTimeout)
            switch responseReader.response(from: input, maxHeadBytes: limits.maxHeaderBytes) {
            case .incomplete:
                return
            case .invalid(let error):
                perform(machine.invalidResponseHead(tooLarge: error.kind == .headTooLarge, detail: error.detail))
                return
            case .complete(let response, let consumed):
                input.drain(consumed)
                machine.clientMustClose = context.draining
                let challenged = authenticators[response.status] != nil
                perform(machine.responseHead(response, challenged: challenged))
                // An answered challenge's retry reads its own response on the next event.
                if challenged, !response.isInterim, !machine.responseStarted { return }
            }
        }
        if case .streaming = machine.state { pumpResponse() }
    }

    // MARK: - Challenges

    /// Asks the auth rules about a challenge and feeds their verdict to the machine.
    private func decideChallenge(_ response: ResponseHead) {
        guard let auth = authenticators[response.status] else {
            perform(machine.challengeDecided(.passThrough, on: response))
            return
        }
        let verdict: Exchange.ChallengeVerdict
        switch auth.decide(on: response, request: authRequest(bodyReplayable: machine.bodyReplayable, status: response.status)) {
        case .answer(let next):
            answers[response.status] = next
            record.auth = "\(next.scheme):answered"
            if let why = next.fallbackReason { record.authFallback = why }
            verdict = .answer(bindsConnection: next.continuesHandshake)
        case .passThrough(let reason):
            if auth.skippedLockedOutSpace { record.auth = "blocked" }
            context.log.debug("challenge passed to the client", [("host", .string(target.host)), ("reason", .string(reason))])
            verdict = .passThrough
        case .fail(let reason):
            verdict = .fail(reason: reason)
        case .fetchToken(let credential, let oauthClient):
            pendingToken = (credential, oauthClient, auth.tokenGenerationSeen)
            verdict = .fetchToken(credential: credential)
        case .prepareKerberos(let request):
            pendingKerberos = (response.status, request)
            verdict = .prepareAnswer
        }
        perform(machine.challengeDecided(verdict, on: response))
    }

    private func continueDiscarding() {
        guard var pump = discardPump, let input = upstream?.stream.input, let trash = context.staging else { return }
        let progress = pump.pump(from: input, to: trash, room: .max)
        trash.drainAll()
        discardPump = pump
        switch progress {
        case .waiting:
            break
        case .finished:
            discardPump = nil
            perform(machine.challengeBodyDiscarded())
        case .failed:
            discardPump = nil
            perform(machine.challengeBodyInvalid())
        }
    }

    /// Fetches (or joins the fetch of) a token, keeps it for every exchange of this snapshot,
    /// then goes on; a failing token endpoint fails the exchange with a 502 naming it.
    private func fetchToken() {
        guard let (credential, oauthClient, seen) = pendingToken else { return }
        snapshot.auth.tokenFlights.token(for: credential, client: oauthClient, seen: seen, context: context, snapshot: snapshot) { [weak self] result in
            guard let self, !self.finished else { return }
            switch result {
            case .success:
                // The flight stored the token for every exchange; the authenticators take it up.
                if case .fetchingToken(_, nil, _) = self.machine.state { self.prepareAuthentication() }
                self.perform(self.machine.tokenFetched())
            case .failure(let error):
                self.perform(self.machine.tokenFailed(error.failure))
            }
        }
    }

    /// Makes the first Kerberos token on a KDC thread; the exchange waits in `preparingAnswer`
    /// (bounded by `header_timeout`) and takes it when it comes back to this loop. A result
    /// for an exchange that ended, or for an earlier connection, is dropped (its context freed).
    private func prepareKerberos() {
        guard let (status, request) = pendingKerberos else { return }
        kerberosRequests += 1
        let number = kerberosRequests
        // The wait is the KDC's, bounded on its own: not a silent upstream.
        responseDeadline.end()
        kerberosTimer.arm(seconds: KerberosOffLoop.maximumWait)
        kerberosJob?.cancel()
        kerberosJob = KerberosOffLoop.prepare(request, context: context) { [weak self] prepared in
            guard let self, !self.finished, self.kerberosRequests == number else { return }
            self.take(prepared, for: status)
        }
    }

    /// No token within `maximumWait` (a KDC thread is stuck behind others on a silent KDC):
    /// the exchange goes on without Kerberos, and the late result is dropped.
    private func kerberosWaitExpired() {
        guard let (status, request) = pendingKerberos, !finished else { return }
        kerberosRequests += 1
        kerberosJob?.cancel()
        take(.refused(request, reason: "the KDC did not answer within \(Seconds.text(KerberosOffLoop.maximumWait))"), for: status)
    }

    private func take(_ prepared: PreparedNegotiate, for status: Int) {
        kerberosTimer.cancel()
        kerberosJob = nil
        // The client's idle_timeout counts again from here (it was not idle while it waited).
        client.stream.enableRead()
        pendingKerberos = nil
        authenticators[status]?.adopt(prepared)
        if case .preparingAnswer(_, nil) = machine.state { resumingPreparedAnswer = true }
        perform(machine.answerPrepared())
        // A challenge passed to the client: its body is already here, and when the upstream
        // ended meanwhile no further event will say so.
        if case .streaming = machine.state {
            pumpResponse()
            if case .streaming = machine.state, upstreamEndedWhilePreparing { perform(machine.upstreamClosed()) }
        }
    }

    private func finalHeadArrived(_ response: ResponseHead, framing: BodyFraming, clientKeepAlive: Bool) {
        // Only an exchange that sent an answer has an outcome to record and a server to verify.
        if authenticators.values.contains(where: \.hasAnswered) {
            let outcomes = authenticators.sorted { $0.key < $1.key }.map { $0.value.complete(response) }.filter { $0 != .notAttempted }
            if !outcomes.isEmpty {
                record.auth = outcomes.map(\.description).joined(separator: ",")
                for outcome in outcomes {
                    Observations.shared.authOutcome(row: target.entry?.pattern ?? Observations.otherRow, outcome: outcome.description)
                }
            }
            // A server that failed mutual authentication is not the one the ticket was for: what
            // it sent never reaches the client, and its connection is closed.
            if let failure = authenticators.values.lazy.compactMap(\.mutualAuthFailure).first {
                record.upstreamStatus = response.status
                perform(machine.finalHeadRefused(.init(.httpProtocolError, details: failure)))
                return
            }
        }
        responseDeadline.end()
        upstream?.stream.setWatermarks(readHigh: context.responseReadAhead, writeBudget: context.bufferBudget)
        var response = response
        // A challenge passed on because its space is locked out says so (never the secret).
        if let lockOut = authenticators.values.lazy.compactMap(\.lockOut).first {
            response.headers.append("Proxy-Status", ProxyStatusField.notice(details: lockOut.sentence))
        }
        record.upstreamStatus = response.status
        if let verifier = target.entry.flatMap({ snapshot.verifiers[$0.pattern] }) {
            holdForVerification(response, framing: framing, clientKeepAlive: clientKeepAlive, verifier: verifier)
            return
        }
        let (bytes, raw) = ForwardedHeads.response(response, framing: framing, clientVersion: head.version, clientKeepAlive: clientKeepAlive)
        record.status = response.status
        client.stream.write(bytes)
        context.metrics.countResponse(status: response.status)
        Observations.shared.exchange(row: target.entry?.pattern ?? Observations.otherRow, errorType: nil)
        responsePump = BodyPump(framing, output: raw ? .raw : .chunked)
    }

    // MARK: - Verified responses

    private func holdForVerification(_ response: ResponseHead, framing: BodyFraming, clientKeepAlive: Bool, verifier: ResponseVerifier) {
        if framing == .untilClose {
            perform(machine.finalHeadRefused(.init(.httpProtocolError, details: "a response to verify must say where it ends (Content-Length or chunked); \(target.hostField) sent one that runs until the connection closes")))
            return
        }
        guard let holder = BodyHolder(framing: framing, limit: limits.signedBodyBytes, budgetLimit: limits.heldBodiesBytes) else {
            perform(machine.finalHeadRefused(.init(.proxyInternalError, details: "out of memory")))
            return
        }
        let hasContent = head.method != "HEAD" && response.status != 204 && response.status != 304
        heldResponse = HeldResponse(head: response, clientKeepAlive: clientKeepAlive, holder: holder, verifier: verifier, hasContent: hasContent)
    }

    /// Takes the held response's body as it arrives; once whole, verifies it and releases it to
    /// the client, or answers with a `502` saying what failed (nothing of it is sent).
    private func pumpHeldResponse(_ held: HeldResponse) {
        guard case .streaming = machine.state, let upstream, let source = upstream.stream.input else { return }
        func refuse(_ type: ProxyErrorType, _ details: String) {
            heldResponse = nil
            context.log.warn("response refused", [("upstream", .string(key.description)), ("reason", .string(details))])
            Observations.shared.authOutcome(row: target.entry?.pattern ?? Observations.otherRow, outcome: "response:refused")
            perform(machine.finalHeadRefused(.init(type, details: details)))
        }
        switch held.holder.take(from: source) {
        case .waiting:
            return
        case .overLimit:
            refuse(.httpResponseBodySize, "the response of \(target.hostField) is held whole to be verified, and its body is over signed_body_bytes (\(limits.signedBodyBytes) bytes)")
        case .budgetSpent:
            refuse(.connectionLimitReached, "the bodies held for signing and verifying already take held_bodies_bytes (\(limits.heldBodiesBytes) bytes)")
        case .invalid(let error):
            refuse(.httpProtocolError, "the response of \(target.hostField) has an invalid body: \(error.detail)")
        case .held(let body):
            let request = SignableRequest(method: head.method, scheme: target.scheme, authority: target.hostField, target: path,
                                          fields: head.headers.fields.map { (name: $0.name, value: $0.value) })
            switch held.verified(body: body.buffer, request: request, now: Int64(time(nil))) {
            case .failure(let why):
                refuse(.httpProtocolError, "the response of \(target.hostField) did not verify: \(why)")
            case .success(let released):
                heldResponse = nil
                let framing: BodyFraming = held.hasContent ? .contentLength(UInt64(body.buffer.count)) : .none
                let (bytes, _) = ForwardedHeads.response(released, framing: framing, clientVersion: head.version, clientKeepAlive: held.clientKeepAlive)
                record.status = released.status
                record.verified = true
                client.stream.write(bytes)
                context.metrics.countResponse(status: released.status)
                Observations.shared.exchange(row: target.entry?.pattern ?? Observations.otherRow, errorType: nil)
                Observations.shared.authOutcome(row: target.entry?.pattern ?? Observations.otherRow, outcome: "response:verified")
                if let output = client.stream.output {
                    record.countResponseBody(UInt64(body.buffer.count))
                    body.buffer.moveAll(to: output)
                }
                held.holder.release()
                perform(machine.responseBodyFinished())
            }
        }
    }

    private func forwardInterim(_ response: ResponseHead) {
        client.stream.write(ForwardedHeads.interim(response))
    }

    private func pumpResponse() {
        if let heldResponse { return pumpHeldResponse(heldResponse) }
        guard case .streaming = machine.state, var pump = responsePump, let upstream,
              let source = upstream.stream.input, let destination = client.stream.output else { return }
        let before = pump.bytesMoved
        let progress = pump.pump(from: source, to: destination, room: client.stream.writeRoom)
        record.countResponseBody(pump.bytesMoved - before)
        responsePump = pump
        switch progress {
        case .waiting:
            break
        case .finished:
            perform(machine.responseBodyFinished())
        case .failed(let error):
            context.log.warn("invalid response body", [("upstream", .string(key.description)), ("reason", .string(error.detail))])
            perform(machine.responseBodyInvalid())
        }
    }

    private func switchProtocols(_ response: ResponseHead) {
        guard let upstream else { return }
        responseDeadline.end()
        client.stream.write(ForwardedHeads.switching(response))
        record.status = 101
        record.upstreamStatus = 101
        self.upstream = nil
        client.switchToTunnel(upstream: upstream, authority: Authority(host: target.host, port: target.port), record: record)
    }

    // MARK: - Completion

    private func finish(_ disposition: Exchange.Disposition, clientKeepAlive: Bool) {
        responseDeadline.end()
        if let upstream {
            switch disposition {
            case .pool: context.pool.put(upstream)
            case .keepForClient: client.keepBoundUpstream(upstream, for: key)
            case .close: upstream.close()
            }
            self.upstream = nil
        }
        record.write(to: context.log)
        client.exchangeFinished(keepAlive: clientKeepAlive)
    }

    /// Before any response byte went to the client: answer with a proxy error.
    private func failBeforeResponse(_ error: ProxyError) {
        responseDeadline.end()
        upstream?.close()
        upstream = nil
        // If the request body was not consumed whole, the next request's start is unknown.
        client.fail(with: error, record: &record, close: !machine.body.finished)
    }

    /// After the response started: the only honest signal left is closing the connection.
    private func abort(_ errorType: String) {
        responseDeadline.end()
        upstream?.close()
        upstream = nil
        if errorType == "client_closed" {
            // The client is already gone: only the record is left to write.
            if record.error == nil { record.error = errorType }
            record.write(to: context.log)
            return
        }
        if record.error == nil { record.error = errorType }
        record.status = record.status == 0 ? 502 : record.status
        record.write(to: context.log)
        client.close()
    }

    func clientClosed() {
        kerberosJob?.cancel()
        perform(machine.clientClosed())
    }

    func responseTimedOut() {
        perform(machine.responseTimerFired(after: Seconds.text(limits.headerTimeout)))
    }

    // MARK: - Connecting

    func upstreamReady(_ connection: UpstreamConnection) {
        guard !finished, connection === upstream else {
            connection.close()
            return
        }
        upstream = nil
        connected(connection)
    }

    func upstreamFailed(_ connection: UpstreamConnection, error: ProxyError) {
        guard connection === upstream || upstream == nil else { return }
        perform(machine.upstreamFailed(error.failure))
    }

    // MARK: - Stream callbacks

    func streamReadable(_ stream: Stream) {
        if stream === client.stream {
            pumpRequest()
        } else if discardPump != nil {
            continueDiscarding()
        } else if case .awaitingHead = machine.state {
            readResponseHead()
        } else {
            pumpResponse()
        }
    }

    func streamWritable(_ stream: Stream) {
        if stream === client.stream {
            if case .awaitingHead = machine.state, discardPump == nil { readResponseHead() } else { pumpResponse() }
        } else {
            pumpRequest()
        }
    }

    func stream(_ stream: Stream, event: StreamEvent) {
        // A TLS handshake's completion can be reported after the bytes it carried were
        // read (TLS 1.3 client Finished + request in one packet): not an ending.
        if event.connected { return }
        if stream === client.stream {
            // A client waiting for its answer while the KDC is asked is not idle: that wait
            // has its own bound (`KerberosOffLoop.maximumWait`).
            if event.timeout, event.reading, case .preparingAnswer = machine.state {
                client.stream.enableRead()
                return
            }
            // The client went away (or stopped reading for idle_timeout).
            client.close()
            return
        }
        guard let upstream, !finished else { return }
        if event.timeout && event.reading && !machine.responseStarted {
            // Silence while the request is still uploading is not a fault: keep waiting.
            upstream.stream.enableRead()
            return
        }
        if event.eof {
            if heldResponse != nil, case .streaming = machine.state {
                // Whatever came of a held response is dropped: it never verified.
                heldResponse = nil
                perform(machine.finalHeadRefused(.init(.httpResponseIncomplete, details: "\(target.hostField) closed the connection before the response to verify was whole")))
                return
            }
            if var pump = responsePump, pump.isUntilClose, case .streaming = machine.state,
               let source = upstream.stream.input, let destination = client.stream.output {
                // Close-delimited body: move what is left, and that is the end.
                let before = pump.bytesMoved
                _ = pump.pump(from: source, to: destination, room: .max)
                record.countResponseBody(pump.bytesMoved - before)
                responsePump = pump
            }
            if case .preparingAnswer = machine.state { upstreamEndedWhilePreparing = true }
            perform(machine.upstreamClosed())
            return
        }
        perform(machine.upstreamError(timeout: event.timeout, reading: event.reading, detail: "\(event)"))
    }
}
