import Glibc
import CountersignAdmin
import CountersignHTTP
import CountersignSigning
import CountersignSupport

/// The upstream connection and the request on it: the head (answers in, signed last) and the
/// body (kept for a replay when the machine says so).
extension ForwardExchange {
    func acquireUpstream() {
        if machine.clientBound, let own = client.takeBoundUpstream(for: key) {
            context.metrics.upstreamReuses.add()
            return connected(own)
        }
        // A connection a binding scheme (NTLM, Negotiate) already authenticated for this
        // credential (with the origin, or with the parent proxy) needs no new handshake.
        for status in [401, 407] where occasional != nil {
            if let credential = occasional?.authenticators[status]?.connectionBindingCredential,
               let bound = context.pool.take(key.bound(to: .credential(credential, generation: snapshot.generation))) {
                context.metrics.upstreamReuses.add()
                return connected(bound)
            }
        }
        if let pooled = takePooled() {
            // The metrics are process-wide and the trimmer a `let` of the worker's context: both
            // held throughout.
            withHeld(context.metrics.upstreamReuses) { $0.add() }
            withHeld(context.idleReadBuffers) { trimmer in
                // The client's stream is asked alone first: most clients are not busy, and passing
                // both streams to the trimmer retained each of them.
                if trimmer.isBusy(client.stream) { trimmer.upstream(pooled.stream, serves: client.stream) }
            }
            return connected(pooled)
        }
        if let shared = sharedHTTP2Lane() {
            context.metrics.upstreamReuses.add()
            return connected(shared)
        }
        // Plain requests through a parent go to it; TLS ones are tunnelled through it.
        let endpoint = target.parent.map { ($0.host, $0.port) } ?? (target.host, target.port)
        guard let connection = UpstreamConnection.open(host: endpoint.0, port: endpoint.1, tls: target.tls, via: target.parentHop,
                                                       forwarding: target.parent != nil, http11Only: machine.request.wantsUpgrade,
                                                       snapshot: snapshot, context: context, delegate: self) else {
            return perform(.upstreamFailed(UpstreamConnection.cannotOpen("\(key)").failure))
        }
        if !machine.isDone { upstream = connection }
    }

    /// Until the final response head, the upstream is read up to max_header_bytes: a head with
    /// large cookies or CSP must not stall at the body's read-ahead (and so meet its size
    /// limit, not header_timeout). From the final head on, only `responseReadAhead` is read
    /// ahead of a slow client.
    private var headReadLimit: Int { max(context.responseReadAhead, limits.maxHeaderBytes) }

    /// A connection for the next attempt is here: its answers are picked (a first Kerberos
    /// token may have to be made off the loop first), and the machine says what goes.
    func connected(_ connection: UpstreamConnection) {
        upstream = connection
        if machine.clientBound { connection.key = connection.key.bound(to: .client) }
        // The connection (the caller's) holds its stream throughout: no retain around it.
        withHeld(connection.stream) { stream in
            stream.delegate = self
            stream.setWatermarks(readHigh: headReadLimit, writeBudget: context.bufferBudget)
            let idleTimeout = limits.idleTimeout
            stream.setTimeouts(read: idleTimeout, write: idleTimeout)
            stream.enableReadWrite()
        }
        if !machine.clientBound { answerOnConnection() }
        let answer: Exchange.FirstAnswer = occasional?.kerberos.pending != nil ? .toPrepare : .ready(handshakeLeg: carriesHandshakeLeg)
        perform(.upstreamConnected(reused: connection.reused, answer: answer))
    }

    func sendHead(ownExpect: Bool, replayKept: Bool, armContinue: Bool, then: Exchange.AfterHead) {
        // Only the upstream's stream is held here (holding the connection too was one more retain).
        guard let upstreamStream = upstream?.stream else { return }
        // Whatever was being waited for belongs to the attempt before.
        responseDeadline.end()
        // A connection a binding scheme authenticates stays with that credential, in the pool too.
        if !machine.clientBound, let credential = occasional?.answers.firstValue({ $0.bindsConnection ? $0.credentialName : nil }) {
            upstream?.key = key.bound(to: .credential(credential, generation: snapshot.generation))
        }
        // Through a parent proxy, plain requests keep their absolute form.
        let requestTarget = target.parent == nil ? path : "http://\(target.hostField)\(path)"
        let answerFields = occasional.map { AnswerFields($0.answers[401].map { ($0.field, $0.value.bytes) }, $0.answers[407].map { ($0.field, $0.value.bytes) }) }
            ?? AnswerFields()
        let forwarded = ForwardedHeads.requestHead(head, framing: machine.request.framing, target: requestTarget,
                                                   hostField: target.hostField, answers: answerFields,
                                                   handshakeLeg: carriesHandshakeLeg, ownExpect: ownExpect,
                                                   receivedIn: client.clientProtocol.receivedVersion)
        if target.plan?.signer == nil {
            upstreamStream.write(forwarded)
        } else {
            // Signed last, over the head exactly as it goes, and anew for every attempt.
            guard let signedHead = signedLast(forwarded.bytes) else { return }
            upstreamStream.write(signedHead)
        }
        // A replay first sends again what was already sent, then the rest as it arrives.
        if replayKept, let output = upstreamStream.output {
            if let chunkStage, let staging = context.staging {
                replay?.replay(into: staging)
                if let error = chunkStage.move(from: staging, to: output) { return refuseChunkedBody(error) }
            } else {
                replay?.replay(into: output)
            }
        }
        if armContinue {
            if continueTimer == nil { continueTimer = Timer(base: context.base) { [unowned self] in self.perform(.continueTimerFired) } }
            continueTimer?.arm(seconds: 1)
        }
        switch then {
        case .armResponseTimer: responseDeadline.begin(seconds: limits.headerTimeout)
        case .pumpRequestBody: pumpRequest()
        case .waitForContinue: break
        }
    }

    /// The head as it goes, signed when the host's policy signs; nil when it cannot be
    /// (the machine was told, and the exchange ended).
    private func signedLast(_ headBytes: [UInt8]) -> [UInt8]? {
        guard let signer = target.plan?.signer else { return headBytes }
        switch signer.sign(head: headBytes, to: target, originTarget: path, hasBody: machine.request.framing != .none, limits: limits) {
        case .success(let signed):
            chunkStage = signed.body.map { resigner in
                guard case .chunked = machine.request.framing else { return ChunkResigningStage(resigner, framing: .contentLength) }
                requestPump.removeChunkedFraming()
                return ChunkResigningStage(resigner, framing: .httpChunked)
            }
            record.signed = true
            Metrics.shared.countSignature(format: signer.format)
            return signed.head
        case .failure(let error):
            perform(.headRefused(error.failure))
            return nil
        }
    }

    func refuseChunkedBody(_ error: AWSSigningError) {
        context.staging?.drainAll()
        perform(.requestBodyInvalid(ProxyError(.httpRequestError(status: 400), details: "\(error)").failure))
    }

    func pumpRequest() {
        guard machine.mayPumpRequestBody, let upstream,
              let source = client.stream.input, let destination = upstream.stream.output else { return }
        let before = requestPump.bytesMoved
        let progress: BodyPump.Progress
        if let chunkStage, let staging = context.staging {
            // The client's bytes are kept for a replay; what goes upstream is re-signed.
            progress = requestPump.pump(from: source, to: staging, room: upstream.stream.writeRoom)
            if let replay, replay.isComplete { replay.keepCopy(of: staging) }
            if let error = chunkStage.move(from: staging, to: destination) { return refuseChunkedBody(error) }
        } else if let replay, replay.isComplete, let staging = context.staging {
            // Through a staging buffer, so what goes upstream is also kept for a replay.
            progress = requestPump.pump(from: source, to: staging, room: upstream.stream.writeRoom)
            replay.keepCopy(of: staging)
            staging.moveAll(to: destination)
        } else {
            progress = requestPump.pump(from: source, to: destination, room: upstream.stream.writeRoom)
        }
        record.countRequestBody(requestPump.bytesMoved - before)
        if requestPump.bytesMoved > 0 { perform(.requestBodyProgressed(keptWhole: replay?.isComplete ?? false)) }
        switch progress {
        case .waiting:
            break
        case .finished:
            // A body that ends inside its aws-chunked stream would reach the origin cut short.
            if let chunkStage, !chunkStage.isComplete {
                return refuseChunkedBody(.invalidChunk("the message body ended before the final aws-chunked chunk"))
            }
            perform(.requestBodyFinished)
        case .failed(let error):
            perform(.requestBodyInvalid(ProxyError.badRequest(error).failure))
        }
    }
}
