import CLibevent
import COpenSSL
import CountersignConfig
import CountersignHTTP
import CountersignInterception
import CountersignSigning

/// One client connection: reads request heads, one at a time (so pipelined requests are
/// answered in order), and hands each to an exchange or a tunnel. Bytes of the next
/// request wait in the input buffer, bounded by the read watermark.
final class ClientConnection: StreamDelegate {
    enum State { case readingHead, holdingBody, exchanging, tunneling, closing, closed }

    let context: WorkerContext
    private(set) var stream: Stream
    let peer: PeerAddress
    let listener: ListenerRuntime
    var state: State = .readingHead
    private(set) var exchangesServed = 0
    private var exchange: ForwardExchange?
    private var tunnel: Tunnel?
    /// Set once a CONNECT has been intercepted: every later request on this connection
    /// must be for that host, and goes upstream over TLS with the host's policy.
    private(set) var interception: InterceptedTunnel?
    var isIntercepted: Bool { interception != nil }

    /// Bounds the wait for each exchange's response head; begun and ended by the exchange.
    private(set) lazy var responseDeadline = Deadline(base: context.base) { [unowned self] in self.exchange?.responseTimedOut() }

    /// Bounds the time to receive a whole head (or the intercepted TLS handshake) from its
    /// first byte; dropped while tunnelling to save memory.
    /// (Begun and ended in ClientConnection+HeadDeadline.swift.)
    var headDeadline: Deadline?
    private var headReader = BufferedHeadReader(.request)

    /// A request whose body is being held whole before it is signed (`.holdingBody`;
    /// ClientConnection+HeldBody.swift).
    var heldRequest: HeldRequest?
    /// The current exchange's held body (its share of `held_bodies_bytes`), released when it ends.
    var heldBody: BodyHolder?

    /// Upstream connections this client authenticated itself (NTLM, Negotiate): its alone
    /// (kept and handed out in ClientConnection+BoundUpstreams.swift).
    var boundUpstreams: ClientBoundUpstreams?

    init(context: WorkerContext, stream: Stream, peer: PeerAddress, listener: ListenerRuntime) {
        self.context = context
        self.stream = stream
        self.peer = peer
        self.listener = listener
    }

    func start() {
        let limits = context.config.limits
        stream.delegate = self
        stream.setWatermarks(readHigh: max(limits.maxHeaderBytes + 1024, context.bufferBudget), writeBudget: context.bufferBudget)
        stream.setTimeouts(read: limits.idleTimeout, write: limits.idleTimeout)
        // A new connection owes its first head (an intercepted one, its handshake) within
        // header_timeout, whether it sends anything or not.
        restartHeadDeadline()
        stream.enableReadWrite()
    }

    // MARK: - Reading heads

    func streamReadable(_ stream: Stream) {
        // Decrypted bytes mean the handshake is done, whatever order the events come in.
        if let interception, !interception.handshakeDone { handshakeFinished() }
        if state == .holdingBody { return continueHolding() }
        guard state == .readingHead else { return }
        readHead()
    }

    func streamWritable(_ stream: Stream) {}

    func stream(_ stream: Stream, event: StreamEvent) {
        if let interception, !interception.handshakeDone {
            if event.connected {
                handshakeFinished()
                context.idleReadBuffers.schedule(stream)
                return
            }
            logClientHandshakeFailure(host: interception.authority.host, event: event)
            close()
            return
        }
        if event.timeout && state == .readingHead {
            // Idle between requests: the client has gone quiet; close without a word.
            close()
            return
        }
        close()
    }

    func readHead() {
        guard stream.inputLength > 0, let input = stream.input else { return }
        switch headReader.request(from: input, maxHeadBytes: context.config.limits.maxHeaderBytes) {
        case .incomplete:
            headBegan()
            return
        case .invalid(let error):
            var record = AccessRecord(client: peer)
            fail(with: .badRequest(error), record: &record, close: true)
        case .complete(let head, let consumed):
            input.drain(consumed)
            headDeadline?.end()
            dispatch(head)
            // A request without a body waiting behind it leaves the TLS filter holding the
            // space its last read reserved, for as long as the response takes: give it back.
            if state == .exchanging, stream.inputLength == 0 { context.idleReadBuffers.schedule(stream) }
        }
    }

    // MARK: - Routing

    /// Routes the request with one configuration snapshot, which serves it throughout.
    private func dispatch(_ head: RequestHead) {
        let snapshot = context.configStore.current
        var record = AccessRecord(client: peer)
        record.method = head.method
        record.path = LoggableTarget.of(head.target)
        let routed = Routing.route(head, listener: listener.config(in: snapshot.configuration), inside: interception, snapshot: snapshot)
        if interception != nil { record.scheme = "https" }
        if let authority = routed.authority {
            record.host = authority.host
            record.port = Int(authority.port)
            if interception == nil && head.method == "CONNECT" { record.path = "-" }
        }
        switch routed.proxyUser {
        case .user(let user)?: record.auth = "proxy:\(user)"
        case .rejected?: record.auth = "proxy:rejected"
        case nil: break
        }
        switch routed.route {
        case .forward(let upstreamTarget, let path, let framing):
            forward(head, to: upstreamTarget, path: path, framing: framing, snapshot: snapshot, record: record)
        case .tunnel(let authority):
            openTunnel(to: authority, snapshot: snapshot, record: record)
        case .intercept(let authority, let host, let runtime):
            intercept(authority: authority, host: host, runtime: runtime, record: &record)
        case .refuse(let error, let closing):
            fail(with: error, record: &record, close: closing)
        }
    }

    private func forward(_ head: RequestHead, to upstreamTarget: UpstreamTarget, path: String, framing: BodyFraming, snapshot: ConfigSnapshot, record: AccessRecord) {
        var record = record
        record.scheme = upstreamTarget.scheme
        record.host = upstreamTarget.host
        record.port = Int(upstreamTarget.port)
        record.path = LoggableTarget.of(path)
        var head = head, path = path
        let row = upstreamTarget.entry?.pattern ?? Observations.otherRow
        let authority = Authority(host: upstreamTarget.host, port: upstreamTarget.port)
        switch RequestInjection.apply(snapshot.injectionPlan(for: upstreamTarget.entry, authority: authority), target: path, headers: head.headers) {
        case .unchanged:
            break
        case .rewritten(let target, let headers, let resolved):
            path = target
            head.headers = headers
            if !resolved.isEmpty {
                record.placeholders = resolved.joined(separator: ",")
                Observations.shared.authOutcome(row: row, outcome: "placeholder:resolved")
            }
        case .refused(let name):
            Observations.shared.authOutcome(row: row, outcome: "placeholder:refused")
            let entry = upstreamTarget.entry.map { "hosts.\"\($0.pattern)\".placeholders" } ?? "a hosts entry's placeholders"
            fail(with: ProxyError(.httpRequestDenied(status: 403),
                                  details: "the placeholder countersign:\(name) is not resolved toward \(authority); it is resolved only where \(entry) names it"),
                 record: &record, close: framing != .none)
            return
        }
        if framing != .none, let digest = upstreamTarget.entry.flatMap({ snapshot.signers[$0.pattern] })?.digest {
            hold(HeldRequest(head: head, target: upstreamTarget, path: path, snapshot: snapshot, record: record), framing: framing, digest: digest)
            return
        }
        startExchange(head, to: upstreamTarget, path: path, framing: framing, snapshot: snapshot, record: record)
    }

    func startExchange(_ head: RequestHead, to upstreamTarget: UpstreamTarget, path: String, framing: BodyFraming, snapshot: ConfigSnapshot, record: AccessRecord) {
        state = .exchanging
        let exchange = ForwardExchange(client: self, snapshot: snapshot, head: head, target: upstreamTarget, path: path, framing: framing, record: record)
        self.exchange = exchange
        exchange.start()
    }


    private func openTunnel(to authority: Authority, snapshot: ConfigSnapshot, record: AccessRecord) {
        state = .tunneling
        stream.delegate = nil
        headDeadline = nil
        let tunnel = Tunnel(client: self, authority: authority, snapshot: snapshot, record: record)
        self.tunnel = tunnel
        tunnel.start()
    }

    /// Answers the CONNECT ourselves and terminates the client's TLS with a leaf minted for
    /// exactly this host; the requests inside are then read like any others.
    private func intercept(authority: Authority, host: HostConfig, runtime: InterceptionRuntime, record: inout AccessRecord) {
        let ssl: OpaquePointer
        do {
            ssl = try runtime.tls.makeServerSSL(for: authority.host)
        } catch {
            fail(with: ProxyError(.proxyInternalError, details: "cannot mint a certificate for \(authority.host): \(error)"), record: &record, close: true)
            return
        }
        stream.write("HTTP/1.1 200 Connection established\r\nVia: 1.1 countersign\r\n\r\n")
        // The 200 above goes out first; a ClientHello already buffered is read first.
        guard let secured = Stream.acceptingTLS(base: context.base, replacing: stream, ssl: ssl) else {
            close()
            return
        }
        stream = secured
        interception = InterceptedTunnel(authority: authority, host: host)
        // Ciphertext that does not decrypt yet is a head (or the handshake) in progress.
        stream.watchRawReads { [weak self] in self?.headBegan() }
        record.status = 200
        record.write(to: context.log)
        exchangesServed += 1
        state = .readingHead
        start()
    }

    // MARK: - Ends of exchanges

    /// Called by the exchange when its response has been handed to the output buffer.
    func exchangeFinished(keepAlive: Bool) {
        exchange = nil
        releaseHeldBody()
        exchangesServed += 1
        guard state == .exchanging else { return }
        stream.delegate = self
        if keepAlive && !context.draining {
            state = .readingHead
            awaitNextHead()
            stream.setTimeouts(read: context.config.limits.idleTimeout, write: context.config.limits.idleTimeout)
            stream.enableRead()
            if stream.inputLength > 0 {
                readHead()
            } else {
                context.idleReadBuffers.schedule(stream)
            }
        } else {
            closeAfterFlush()
        }
    }

    /// Hands the client and an upstream that answered `101` to a byte tunnel.
    func switchToTunnel(upstream: UpstreamConnection, authority: Authority, record: AccessRecord) {
        // The tunnel keeps the configuration its request was served with.
        let snapshot = exchange?.snapshot ?? context.configStore.current
        exchange = nil
        state = .tunneling
        headDeadline = nil
        let tunnel = Tunnel(client: self, upgradedUpstream: upstream, authority: authority, snapshot: snapshot, record: record)
        self.tunnel = tunnel
        tunnel.start()
    }

    /// Answers a connection that may not be served (allow list) and closes it.
    func refuse(_ error: ProxyError) {
        stream.delegate = self
        stream.enableReadWrite()
        var record = AccessRecord(client: peer)
        fail(with: error, record: &record, close: true)
    }

    func tunnelFinished() {
        tunnel = nil
        close()
    }

    /// Sends a response the proxy made itself, logs it, and either reads the next request
    /// or closes once the response is written.
    func fail(with error: ProxyError, record: inout AccessRecord, close: Bool) {
        record.status = error.status
        record.error = error.type.name
        record.errorDetails = error.details
        stream.delegate = self
        stream.write(error.response(close: close || context.draining))
        context.metrics.countResponse(status: error.status)
        context.metrics.countError(type: error.type.name)
        if record.host != "-" {
            Observations.shared.exchange(row: Observations.row(host: record.host, port: record.port, in: context.config.hosts), errorType: error.type.name)
        }
        Observations.shared.refused(host: record.host == "-" ? "-" : "\(record.host):\(record.port)", status: error.status, type: error.type.name, details: error.details)
        record.write(to: context.log)
        exchange = nil
        releaseHeldBody()
        if close || context.draining {
            closeAfterFlush()
        } else {
            exchangesServed += 1
            state = .readingHead
            awaitNextHead()
            if stream.inputLength > 0 { readHead() }
        }
    }

    func closeAfterFlush() {
        guard state != .closing, state != .closed else { return }
        state = .closing
        headDeadline?.end()
        stream.closeWhenFlushed { [weak self] in self?.close() }
    }

    /// Called on drain: an idle keep-alive connection is closed now, a busy one after its exchange.
    func drainIfIdle() {
        if state == .readingHead && stream.inputLength == 0 { close() }
    }

    func close() {
        guard state != .closed else { return }
        state = .closed
        headDeadline?.end()
        exchange?.clientClosed()
        exchange = nil
        releaseHeldBody()
        tunnel?.clientClosed()
        tunnel = nil
        boundUpstreams?.closeAll()
        boundUpstreams = nil
        stream.close()
        context.unregister(self)
    }
}
