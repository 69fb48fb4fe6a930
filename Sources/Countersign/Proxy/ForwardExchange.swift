import CEventSSL
import CountersignAuth
import CountersignHTTP

/// One request forwarded upstream and its response brought back, bodies streamed in both
/// directions at once (an upstream may answer before the upload ends). The exchange is the
/// delegate of both streams while it runs, and hands the client back when done.
final class ForwardExchange: StreamDelegate, UpstreamConnectDelegate {
    /// The client owns this exchange and outlives it.
    private unowned(unsafe) let client: ClientConnection
    private var context: WorkerContext { client.context }
    private let head: RequestHead
    private let target: UpstreamTarget
    private var key: UpstreamKey { target.key }
    private let path: String
    private let requestFraming: BodyFraming
    private var record: AccessRecord

    private var upstream: UpstreamConnection?
    private var requestPump: BodyPump
    private var requestDone = false
    private var headSent = false
    private var responseHead: ResponseHead?
    private var responseReader = BufferedHeadReader(.response)
    private var responsePump: BodyPump?
    private var responseDone = false
    private var clientKeepAlive = false
    private var upstreamBytesSeen = false
    private var retried = false
    private var finished = false

    // Challenge answering, by the status that challenges: 401 for the origin (hosts with
    // `auth` rules), 407 for the parent proxy when plain requests go through it.
    private var authenticators: [Int: ExchangeAuthenticator] = [:]
    /// The answers the current attempt carries, by the status they answer.
    private var answers: [Int: AuthAnswer] = [:]
    private var originAuth: ExchangeAuthenticator? { authenticators[401] }
    /// A copy of the body sent so far, for a replay after a 401.
    private var replay: ReplayBuffer?
    /// With `Expect: 100-continue` sent on our own account, the body waits for the 100.
    private var holdingBody = false
    /// Draining a 401's body before the request goes again on the same connection.
    private var discardPump: BodyPump?
    private var discardThen: (() -> Void)?
    private let clientExpectsContinue: Bool
    /// Whether the upstream connection belongs to the client connection: the client
    /// authenticates it itself (NTLM, Negotiate), in this request or an earlier one. Such a
    /// connection is never pooled, and Countersign's own credentials never answer on it.
    private var clientBound: Bool
    /// The configuration generation the answers come from (a connection bound to a credential
    /// is bound to that name as configured then).
    private var authGeneration = 0
    // Timers are owned here and die with the exchange, so they never call a freed one.
    private lazy var continueTimer = Timer(base: context.base) { [unowned self] in self.releaseHeldBody() }
    /// The client connection's one timer for waiting on response heads, reused by every
    /// exchange on it (no timer allocation per request).
    private var responseTimer: Timer { client.responseTimer }

    static let via = "1.1 countersign"

    init(client: ClientConnection, head: RequestHead, target: UpstreamTarget, path: String, framing: BodyFraming, record: AccessRecord) {
        self.client = client
        self.head = head
        self.target = target
        self.path = path
        self.requestFraming = framing
        self.record = record
        self.requestPump = BodyPump(framing)
        self.requestDone = requestPump.isFinished
        self.clientExpectsContinue = head.headers.listContains("Expect", token: "100-continue")
        self.clientBound = ConnectionBoundAuthorization.isPresent(inAuthorization: head.headers.values("Authorization"))
    }

    private var wantsUpgrade: Bool { HopByHop.requestsUpgrade(head.headers) }

    func start() {
        client.stream.delegate = self
        let snapshot = context.configStore.current
        let runtime = snapshot.auth
        authGeneration = snapshot.generation
        // The client's next requests go on the connection it authenticated, as it expects.
        if client.holdsBoundUpstream(for: key) { clientBound = true }
        if !clientBound {
            authenticators[401] = ExchangeAuthenticator(runtime: runtime, host: target.entry, upstream: target, clientHeaders: head.headers)
        }
        if let parent = target.parent { authenticators[407] = ExchangeAuthenticator(runtime: runtime, parent: parent) }
        // A token that is missing or about to expire is fetched before the request goes.
        if let (credential, oauthClient) = originAuth?.tokenToFetchFirst() {
            fetchToken(credential: credential, client: oauthClient) { exchange in
                exchange.prepareAuthentication()
                exchange.acquireUpstream()
            }
            return
        }
        prepareAuthentication()
        acquireUpstream()
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
        switch requestFraming {
        case .none:
            break
        case .contentLength(let length) where length <= UInt64(context.config.limits.replayBodyBytes):
            replay = ReplayBuffer(limit: context.config.limits.replayBodyBytes)
        default:
            if answers.count < authenticators.count { holdingBody = true }
        }
    }

    /// For the origin's 401s the origin connection counts; for the parent's 407s the one to
    /// the parent (TLS for an https parent).
    private func authRequest(bodyReplayable: Bool, status: Int = 401) -> AuthRequest {
        let overTLS = status == 407 ? target.parentHop?.tls != nil : target.tls != nil
        return AuthRequest(method: head.method, target: path, connectionIsTLS: overTLS, bodyReplayable: bodyReplayable,
                           body: bodyHash,
                           channelBinding: target.tls != nil ? ExchangeAuthenticator.channelBinding(upstream) : nil)
    }

    /// The body's digests for Digest `auth-int`: known once the whole body was kept.
    private var bodyHash: RequestBodyHash {
        if requestFraming == .none { return .empty }
        guard requestDone, let digests = replay?.digests([.md5, .sha256, .sha512_256]) else { return .unavailable }
        return .known(digests)
    }

    /// Whether the body could be sent again: not started, or every byte sent is still held.
    private var bodyReplayable: Bool {
        requestPump.bytesMoved == 0 || (replay?.isComplete ?? false)
    }

    // MARK: - Upstream connection

    private func acquireUpstream() {
        if clientBound, let own = client.takeBoundUpstream(for: key) {
            context.metrics.upstreamReuses.add()
            attach(own)
            sendHead()
            return
        }
        // A connection NTLM already authenticated for this credential needs no new handshake.
        if let credential = originAuth?.connectionBindingCredential,
           let bound = context.pool.take(key.bound(to: .credential(credential, generation: authGeneration))) {
            context.metrics.upstreamReuses.add()
            attach(bound)
            sendHead()
            return
        }
        if let pooled = context.pool.take(key) {
            context.metrics.upstreamReuses.add()
            attach(pooled)
            sendHead()
            return
        }
        // Plain requests through a parent go to it; TLS ones are tunnelled through it.
        let endpoint = target.parent.map { ($0.host, $0.port) } ?? (target.host, target.port)
        guard let connection = UpstreamConnection.open(host: endpoint.0, port: endpoint.1, tls: target.tls, via: target.parentHop,
                                                       forwarding: target.parent != nil, context: context, delegate: self) else {
            failBeforeResponse(UpstreamConnection.cannotOpen("\(key)"))
            return
        }
        if !finished { upstream = connection }
    }

    private func attach(_ connection: UpstreamConnection) {
        upstream = connection
        if clientBound { connection.key.binding = .client }
        connection.stream.delegate = self
        let limits = context.config.limits
        connection.stream.setWatermarks(readHigh: context.bufferBudget, writeBudget: context.bufferBudget)
        connection.stream.setTimeouts(read: limits.idleTimeout, write: limits.idleTimeout)
        connection.stream.enableReadWrite()
    }

    private func sendHead() {
        guard let upstream else { return }
        var headers = head.headers
        HopByHop.strip(&headers, keepUpgrade: wantsUpgrade)
        // RFC 9112 §3.2.2: the target's authority replaces whatever Host the client sent.
        headers.replaceOrAppend("Host", target.hostField)
        headers.append("Via", head.version == .http10 ? "1.0 countersign" : Self.via)
        let handshakeLeg = answers.values.contains { $0.isHandshakeLeg }
        for answer in answers.values { headers.replaceOrAppend(answer.headerName, answer.value) }
        // A connection NTLM authenticates stays with that credential, in the pool too.
        if let answer = answers[401], answer.bindsConnection, !clientBound {
            upstream.key = key.bound(to: .credential(answer.credentialName, generation: authGeneration))
        }
        if handshakeLeg && requestFraming != .none {
            // NTLM handshake legs carry no body (IIS requires it); the body goes with the last leg.
            headers.removeAll("Transfer-Encoding")
            headers.removeAll("Expect")
            headers.replaceOrAppend("Content-Length", "0")
        } else {
            // The body is re-chunked: announce exactly the codings applied, whatever empty
            // list elements the client's spelling had.
            if requestFraming == .chunked { headers.normalizeList("Transfer-Encoding") }
            if holdingBody && !clientExpectsContinue { headers.append("Expect", "100-continue") }
        }
        // Through a parent proxy, plain requests keep their absolute form.
        let requestTarget = target.parent == nil ? path : "http://\(target.hostField)\(path)"
        upstream.stream.write(HeadSerializer.request(method: head.method, target: requestTarget, headers: headers))
        headSent = true
        attemptCarriesBody = !handshakeLeg && requestFraming != .none
        if attemptCarriesBody {
            // A replay first sends again what was already sent, then the rest as it arrives.
            if requestPump.bytesMoved > 0 { replay?.replay(into: upstream.stream.output) }
            if holdingBody { continueTimer.arm(seconds: 1) }
        }
        if requestDone || !attemptCarriesBody {
            armResponseTimer()
        } else {
            pumpRequest()
        }
    }

    /// Whether this attempt's head announced the body (NTLM legs do not).
    private var attemptCarriesBody = false

    /// No 100 came within a second: servers that ignore `Expect` wait for the body.
    private func releaseHeldBody() {
        guard holdingBody, !finished else { return }
        holdingBody = false
        pumpRequest()
    }

    // MARK: - Request body

    private func pumpRequest() {
        guard headSent, attemptCarriesBody, !holdingBody, discardPump == nil, !requestDone, let upstream, upstream.stream.isOpen else { return }
        let before = requestPump.bytesMoved
        let progress: BodyPump.Progress
        if let replay, replay.isComplete, let staging = context.staging {
            // Through a staging buffer, so what goes upstream is also kept for a replay.
            progress = requestPump.pump(from: client.stream.input, to: staging, room: upstream.stream.writeRoom)
            replay.keepCopy(of: staging)
            evbuffer_add_buffer(upstream.stream.output, staging)
        } else {
            progress = requestPump.pump(from: client.stream.input, to: upstream.stream.output, room: upstream.stream.writeRoom)
        }
        record.bytesIn += requestPump.bytesMoved - before
        switch progress {
        case .waiting:
            break
        case .finished:
            requestDone = true
            armResponseTimer()
            finishIfDone()
        case .failed(let error):
            abortOrFail(ProxyError.badRequest(error))
        }
    }

    private func armResponseTimer() {
        if responseHead == nil { responseTimer.arm(seconds: context.config.limits.headerTimeout) }
    }

    func responseTimedOut() {
        guard responseHead == nil, !finished else { return }
        failBeforeResponse(ProxyError(status: 504, type: "http_response_timeout",
                                      details: "\(key) sent no response head within \(Seconds.text(context.config.limits.headerTimeout))"))
    }

    // MARK: - Response

    private func readResponseHead() {
        guard let upstream else { return }
        while responseHead == nil {
            // Interim responses go to the client only as fast as it reads them (a flood of
            // 1xx to a client that does not read); the upstream waits, its input bounded.
            guard client.stream.writeRoom > 0 else { return }
            let available = upstream.stream.inputLength
            guard available > 0 else { return }
            upstreamBytesSeen = true
            switch responseReader.response(from: upstream.stream.input, maxHeadBytes: context.config.limits.maxHeaderBytes) {
            case .incomplete:
                return
            case .invalid(let error):
                failBeforeResponse(ProxyError(status: 502, type: error.kind == .headTooLarge ? "http_response_header_section_size" : "http_protocol_error",
                                              details: "invalid response from \(key): \(error.detail)"))
                return
            case .complete(let response, let consumed):
                evbuffer_drain(upstream.stream.input, consumed)
                if response.status == 101 {
                    switchProtocols(response)
                    return
                }
                if response.isInterim {
                    if response.status == 100 && holdingBody {
                        holdingBody = false
                        continueTimer.cancel()
                        if clientExpectsContinue { forwardInterim(response) }
                        pumpRequest()
                    } else {
                        forwardInterim(response)
                    }
                    continue
                }
                if authenticators[response.status] != nil, handleChallenge(response) { return }
                finalHeadArrived(response)
            }
        }
        pumpResponse()
    }

    // MARK: - Challenges

    /// Asks the auth rules about a 401; returns true when it is answered (the request will go
    /// again), false when the 401 should go to the client.
    private func handleChallenge(_ response: ResponseHead) -> Bool {
        guard let auth = authenticators[response.status] else { return false }
        switch auth.decide(on: response, request: authRequest(bodyReplayable: bodyReplayable, status: response.status)) {
        case .answer(let next):
            answers[response.status] = next
            record.auth = "\(next.scheme):answered"
            discardChallengeBody(response) { [weak self] reusable in self?.sendAgain(onSameConnection: reusable, ntlm: next.bindsConnection) }
            return true
        case .passThrough(let reason):
            if auth.skippedLockedOutSpace { record.auth = "blocked" }
            context.log.debug("challenge passed to the client", [("host", .string(target.host)), ("reason", .string(reason))])
            return false
        case .fail(let reason):
            failBeforeResponse(ProxyError(status: 502, type: "proxy_configuration_error", details: reason))
            return true
        case .fetchToken(let credential, let oauthClient):
            discardChallengeBody(response) { [weak self] reusable in
                self?.fetchToken(credential: credential, client: oauthClient, challenge: response, reusable: reusable)
            }
            return true
        }
    }

    /// Reads and drops the 401's body, then tells whether the connection can carry the next attempt.
    private func discardChallengeBody(_ response: ResponseHead, then next: @escaping (Bool) -> Void) {
        let framing = (try? BodyFraming.forResponse(response, requestMethod: head.method)) ?? .untilClose
        let reusable = response.allowsKeepAlive && framing != .untilClose && (requestDone || !attemptCarriesBody)
        guard reusable else {
            next(false)
            return
        }
        discardPump = BodyPump(framing)
        discardThen = { next(true) }
        continueDiscarding()
    }

    private func continueDiscarding() {
        guard var pump = discardPump, let upstream, let trash = context.staging else { return }
        let progress = pump.pump(from: upstream.stream.input, to: trash, room: .max)
        evbuffer_drain(trash, evbuffer_get_length(trash))
        discardPump = pump
        switch progress {
        case .waiting:
            break
        case .finished:
            discardPump = nil
            let next = discardThen
            discardThen = nil
            next?()
        case .failed:
            discardPump = nil
            discardThen = nil
            failBeforeResponse(ProxyError(status: 502, type: "http_protocol_error", details: "invalid 401 body from \(key)"))
        }
    }

    /// The next attempt, with `answer`: on this connection when it can carry it, else a new one
    /// (NTLM cannot move: its handshake belongs to one connection).
    private func sendAgain(onSameConnection reusable: Bool, ntlm: Bool) {
        guard !finished else { return }
        responseTimer.cancel()
        upstreamBytesSeen = false
        if reusable {
            headSent = false
            sendHead()
            return
        }
        if ntlm {
            failBeforeResponse(ProxyError(status: 502, type: "http_protocol_error",
                                          details: "\(key) closed the connection during the NTLM handshake"))
            return
        }
        upstream?.close()
        upstream = nil
        headSent = false
        acquireUpstream()
    }

    private func fetchToken(credential: String, client oauthClient: OAuth2Client, challenge: ResponseHead, reusable: Bool) {
        fetchToken(credential: credential, client: oauthClient) { exchange in
            if exchange.handleChallenge(challengeAgain: challenge, reusable: reusable) { return }
            // Nothing to answer after all: the 401 cannot be shown (its body is gone).
            exchange.failBeforeResponse(ProxyError(status: 502, type: "proxy_configuration_error",
                                                   details: "the OAuth2 token for credential \(credential) was not accepted"))
        }
    }

    /// Fetches (or joins the fetch of) a token, keeps it for every exchange of this snapshot,
    /// then goes on; a failing token endpoint fails the exchange with a 502 naming it.
    private func fetchToken(credential: String, client oauthClient: OAuth2Client, then next: @escaping (ForwardExchange) -> Void) {
        let snapshot = context.configStore.current
        TokenFetcher.fetch(client: oauthClient, credential: credential, context: context, snapshot: snapshot) { [weak self] result in
            guard let self, !self.finished else { return }
            switch result {
            case .success(let token):
                snapshot.auth.storeToken(token, for: credential)
                next(self)
            case .failure(let error):
                self.failBeforeResponse(error)
            }
        }
    }

    /// After a token fetch: decide again on the same 401 (whose body is already drained).
    private func handleChallenge(challengeAgain response: ResponseHead, reusable: Bool) -> Bool {
        guard let auth = authenticators[response.status] else { return false }
        switch auth.decide(on: response, request: authRequest(bodyReplayable: bodyReplayable, status: response.status)) {
        case .answer(let next):
            answers[response.status] = next
            record.auth = "\(next.scheme):answered"
            sendAgain(onSameConnection: reusable, ntlm: next.bindsConnection)
            return true
        case .fail(let reason):
            failBeforeResponse(ProxyError(status: 502, type: "proxy_configuration_error", details: reason))
            return true
        case .fetchToken, .passThrough:
            return false
        }
    }

    private func finalHeadArrived(_ response: ResponseHead) {
        let outcomes = authenticators.sorted { $0.key < $1.key }.map { $0.value.complete(response) }.filter { $0 != .notAttempted }
        if !outcomes.isEmpty {
            record.auth = outcomes.map(\.description).joined(separator: ",")
            for outcome in outcomes {
                Observations.shared.authOutcome(row: target.entry?.pattern ?? Observations.otherRow, outcome: outcome.description)
            }
        }
        startResponse(response)
    }

    private func forwardInterim(_ response: ResponseHead) {
        // HTTP/1.0 clients do not understand 1xx (RFC 9110 §15.2).
        guard head.version != .http10 else { return }
        var headers = response.headers
        HopByHop.strip(&headers)
        client.stream.write(HeadSerializer.response(ResponseHead(version: .http11, status: response.status, reason: response.reason, headers: headers)))
    }

    private func startResponse(_ response: ResponseHead) {
        responseTimer.cancel()
        let framing: BodyFraming
        do {
            framing = try BodyFraming.forResponse(response, requestMethod: head.method)
        } catch let error as HTTPParseError {
            failBeforeResponse(ProxyError(status: 502, type: "http_protocol_error", details: "invalid response from \(key): \(error.detail)"))
            return
        } catch {
            return
        }
        var output = BodyPump.Output.chunked
        clientKeepAlive = head.wantsKeepAlive && !context.draining && framing != .untilClose
        var headers = response.headers
        HopByHop.strip(&headers)
        if framing == .chunked && head.version == .http10 {
            // An HTTP/1.0 client cannot read chunked: send the payload raw and close.
            output = .raw
            headers.removeAll("Transfer-Encoding")
            clientKeepAlive = false
        } else if framing == .chunked {
            headers.normalizeList("Transfer-Encoding")
        }
        headers.append("Via", response.version == .http10 ? "1.0 countersign" : Self.via)
        if !clientKeepAlive {
            headers.append("Connection", "close")
        } else if head.version == .http10 {
            headers.append("Connection", "keep-alive")
        }
        responseHead = response
        record.upstreamStatus = response.status
        record.status = response.status
        client.stream.write(HeadSerializer.response(ResponseHead(version: .http11, status: response.status, reason: response.reason, headers: headers)))
        context.metrics.countResponse(status: response.status)
        Observations.shared.exchange(row: target.entry?.pattern ?? Observations.otherRow, errorType: nil)
        responsePump = BodyPump(framing, output: output)
    }

    private func pumpResponse() {
        guard responseHead != nil, var pump = responsePump, let upstream, !responseDone else { return }
        let before = pump.bytesMoved
        let progress = pump.pump(from: upstream.stream.input, to: client.stream.output, room: client.stream.writeRoom)
        record.bytesOut += pump.bytesMoved - before
        responsePump = pump
        switch progress {
        case .waiting:
            break
        case .finished:
            responseDone = true
            finishIfDone()
        case .failed(let error):
            record.error = "http_protocol_error"
            context.log.warn("invalid response body", [("upstream", .string(key.description)), ("reason", .string(error.detail))])
            abort()
        }
    }

    private func switchProtocols(_ response: ResponseHead) {
        guard wantsUpgrade, let upstream else {
            failBeforeResponse(ProxyError(status: 502, type: "http_upgrade_failed", details: "\(key) switched protocols without being asked"))
            return
        }
        responseTimer.cancel()
        var headers = response.headers
        HopByHop.strip(&headers, keepUpgrade: true)
        headers.append("Via", Self.via)
        client.stream.write(HeadSerializer.response(ResponseHead(version: .http11, status: 101, reason: response.reason, headers: headers)))
        record.status = 101
        record.upstreamStatus = 101
        finished = true
        self.upstream = nil
        client.switchToTunnel(upstream: upstream, authority: Authority(host: target.host, port: target.port), record: record)
    }

    // MARK: - Completion

    private func finishIfDone() {
        guard responseDone, !finished else { return }
        finished = true
        responseTimer.cancel()
        if let upstream {
            let reusable = requestDone && (responseHead?.allowsKeepAlive ?? false) && !(responsePump?.isUntilClose ?? true)
            if reusable && clientBound {
                // Back to the client that authenticated it, for as long as that client stays.
                if clientKeepAlive { client.keepBoundUpstream(upstream, for: key) } else { upstream.close() }
            } else if reusable {
                context.pool.put(upstream)
            } else {
                upstream.close()
            }
            self.upstream = nil
        }
        record.write(to: context.log)
        // Unread request body bytes leave the client connection's framing unknown: close it.
        client.exchangeFinished(keepAlive: clientKeepAlive && requestDone)
    }

    /// Before any response byte went to the client: answer with a proxy error.
    private func failBeforeResponse(_ error: ProxyError) {
        guard !finished else { return }
        finished = true
        responseTimer.cancel()
        upstream?.close()
        upstream = nil
        guard responseHead == nil else {
            abortClient()
            return
        }
        // If the request body was not consumed whole, the next request's start is unknown.
        client.fail(with: error, record: &record, close: !requestDone)
    }

    private func abortOrFail(_ error: ProxyError) {
        if responseHead == nil {
            failBeforeResponse(error)
        } else {
            record.error = error.type
            abort()
        }
    }

    /// After the response started: the only honest signal left is closing the connection.
    private func abort() {
        guard !finished else { return }
        finished = true
        responseTimer.cancel()
        upstream?.close()
        upstream = nil
        abortClient()
    }

    private func abortClient() {
        record.status = record.status == 0 ? 502 : record.status
        record.write(to: context.log)
        client.close()
    }

    func clientClosed() {
        guard !finished else { return }
        finished = true
        responseTimer.cancel()
        upstream?.close()
        upstream = nil
        if record.error == nil { record.error = "client_closed" }
        record.write(to: context.log)
    }

    // MARK: - Connecting

    func upstreamReady(_ connection: UpstreamConnection) {
        guard !finished, connection === upstream else {
            connection.close()
            return
        }
        attach(connection)
        sendHead()
    }

    func upstreamFailed(_ connection: UpstreamConnection, error: ProxyError) {
        guard connection === upstream || upstream == nil else { return }
        failBeforeResponse(error)
    }

    // MARK: - Stream callbacks

    func streamReadable(_ stream: Stream) {
        if stream === client.stream {
            pumpRequest()
        } else if discardPump != nil {
            continueDiscarding()
        } else if responseHead == nil {
            readResponseHead()
        } else {
            pumpResponse()
        }
    }

    func streamWritable(_ stream: Stream) {
        if stream === client.stream {
            if responseHead == nil, discardPump == nil { readResponseHead() } else { pumpResponse() }
        } else {
            pumpRequest()
        }
    }

    func stream(_ stream: Stream, event: StreamEvent) {
        // A TLS handshake's completion can be reported after the bytes it carried were
        // read (TLS 1.3 client Finished + request in one packet): not an ending.
        if event.connected { return }
        if stream === client.stream {
            // The client went away (or stopped reading for idle_timeout).
            client.close()
            return
        }
        guard let upstream, !finished else { return }
        if event.timeout && event.reading && responseHead == nil {
            // Silence while the request is still uploading is not a fault: keep waiting.
            upstream.stream.enableRead()
            return
        }
        if event.eof && responseHead == nil {
            if upstream.reused && !upstreamBytesSeen && requestFraming == .none && !retried {
                // A pooled connection the server had already closed: try once on a new one.
                retried = true
                upstream.close()
                self.upstream = nil
                headSent = false
                acquireUpstream()
                return
            }
            failBeforeResponse(ProxyError(status: 502, type: "http_response_incomplete", details: "\(key) closed the connection without a response"))
            return
        }
        if event.eof, var pump = responsePump, pump.isUntilClose {
            // Close-delimited body: move what is left, and that is the end.
            let before = pump.bytesMoved
            _ = pump.pump(from: upstream.stream.input, to: client.stream.output, room: .max)
            record.bytesOut += pump.bytesMoved - before
            responsePump = pump
            responseDone = true
            upstream.close()
            self.upstream = nil
            finishIfDone()
            return
        }
        if responseHead == nil {
            let type = event.timeout ? "http_response_timeout" : "connection_terminated"
            failBeforeResponse(ProxyError(status: event.timeout ? 504 : 502, type: type, details: "\(key) failed before responding (\(event))"))
        } else {
            record.error = event.timeout ? "connection_read_timeout" : "http_response_incomplete"
            abort()
        }
    }
}

enum Seconds {
    /// "15s", "1.5s", "10m" — how durations are written in the configuration.
    static func text(_ seconds: Double) -> String {
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60))m" }
        if seconds == seconds.rounded() { return "\(Int(seconds))s" }
        return "\(seconds)s"
    }
}
