import CLibevent
import COpenSSL
import CountersignConfig
import CountersignHTTP
import CountersignInterception
import CountersignSigning
import CountersignSupport
import Foundation

/// One client connection: reads request heads, one at a time (so pipelined requests are
/// answered in order), and hands each to an exchange or a tunnel. Bytes of the next
/// request wait in the input buffer, bounded by the read watermark.
final class ClientConnection: StreamDelegate {
    /// `awaitingCredentials`: an injected OAuth2 access token (ClientConnection+InjectedTokens.swift) or
    /// web identity keys (ClientConnection+AWSKeys.swift) are being fetched before the request goes.
    /// `http2`: the client chose h2 by ALPN; `http2Session` carries the connection now.
    enum State { case readingHead, awaitingCredentials, holdingBody, exchanging, tunneling, http2, closing, closed }

    let context: WorkerContext
    private(set) var stream: Stream
    let peer: PeerAddress
    let listener: ListenerRuntime
    var state: State = .readingHead
    var exchangesServed = 0
    var exchange: ForwardExchange?
    var tunnel: Tunnel?
    /// Set once a CONNECT has been intercepted: every later request on this connection
    /// must be for that host, and goes upstream over TLS with the host's policy.
    private(set) var interception: InterceptedTunnel?
    var isIntercepted: Bool { interception != nil }
    /// The HTTP version the client speaks here: an HTTP/2 stream is carried as HTTP/1.1.
    let clientProtocol: ClientProtocol
    /// The HTTP/2 connection this one became (ClientConnection+HTTP2.swift).
    var http2Session: H2ClientSession?
    /// Called once this connection has closed (an HTTP/2 stream's bridge listens).
    var closedHook: (() -> Void)?
    /// The HTTP/2 stream this connection carries, which takes its response heads as fields
    /// (`responseHeads`); its bridge owns this connection and clears this before letting go.
    unowned(unsafe) var h2Stream: H2StreamBridge?

    /// Bounds the wait for each exchange's response head; begun and ended by the exchange.
    /// Taken from the worker's spares when first needed, given back when this connection goes.
    var responseDeadline: Deadline {
        if let madeResponseDeadline { return madeResponseDeadline }
        let deadline = context.spareDeadlines.take { [unowned self] in self.exchange?.responseTimedOut() }
        madeResponseDeadline = deadline
        return deadline
    }
    private var madeResponseDeadline: Deadline?

    /// Bounds the time to receive a whole head (or the intercepted TLS handshake) from its
    /// first byte; dropped while tunnelling to save memory.
    /// (Begun and ended in ClientConnection+HeadDeadline.swift.)
    var headDeadline: Deadline?
    private var headReader = BufferedHeadReader(.request)
    /// The upstream of the last absolute-form request forwarded, for the next one to the same place.
    private var routeMemo = RouteMemo()
    /// This connection's listener as the snapshot of `generation` configures it: looked up once
    /// per generation, not by address on every request, and read in place (a class), not copied.
    private final class ListenerSetting {
        let generation: Int
        let config: ListenerConfig
        init(generation: Int, config: ListenerConfig) {
            self.generation = generation
            self.config = config
        }
    }
    private var listenerSetting: ListenerSetting?

    /// A request whose body is being held whole before it is signed (`.holdingBody`;
    /// ClientConnection+HeldBody.swift).
    var heldRequest: HeldRequest?
    /// The current exchange's held body (its share of `held_bodies_bytes`), released when it ends.
    var heldBody: BodyHolder?
    /// The access record last handed out (`newRecord`), kept to serve the next exchange.
    var spareRecord: AccessRecord?

    /// Upstream connections this client authenticated itself (NTLM, Negotiate): its alone
    /// (kept and handed out in ClientConnection+BoundUpstreams.swift).
    var boundUpstreams: ClientBoundUpstreams?

    /// `interception`: an HTTP/2 stream inside an intercepted tunnel, whose handshake is done.
    init(context: WorkerContext, stream: Stream, peer: PeerAddress, listener: ListenerRuntime,
         interception: InterceptedTunnel? = nil, clientProtocol: ClientProtocol = .http11) {
        self.context = context
        self.stream = stream
        self.peer = peer
        self.listener = listener
        self.interception = interception
        self.clientProtocol = clientProtocol
    }

    deinit {
        if let madeResponseDeadline { context.spareDeadlines.giveBack(madeResponseDeadline) }
    }

    func start() {
        prepareStream()
        // A new connection owes its first head (an intercepted one, its handshake) within
        // header_timeout, whether it sends anything or not.
        restartHeadDeadline()
        stream.enableReadWrite()
    }

    /// The connection of an HTTP/2 stream, given its request as a parsed head (the body
    /// follows on the stream): served as a head read from the stream is, or refused as a bad
    /// one is. It owes no head, so it has no head deadline.
    func start(serving request: Result<RequestHead, HTTPParseError>) {
        prepareStream()
        stream.enableReadWrite()
        switch request {
        case .success(let head):
            dispatch(head, snapshot: context.configStore.current)
        case .failure(let error):
            let record = newRecord()
            fail(with: .badRequest(error), record: record, close: true)
        }
    }

    private func prepareStream() {
        let limits = context.config.limits
        stream.delegate = self
        stream.setWatermarks(readHigh: max(limits.maxHeaderBytes + 1024, context.bufferBudget), writeBudget: context.bufferBudget)
        stream.setTimeouts(read: limits.idleTimeout, write: limits.idleTimeout)
    }

    // MARK: - Reading heads

    // While an exchange runs, this connection stays its stream's delegate and passes the
    // events on: making the exchange the delegate and taking it back swapped (retained and
    // released) both sides twice a request. The binding holds the exchange for the call, as
    // the stream's reference to its delegate did, should it end inside.
    func streamReadable(_ stream: Stream) {
        if let exchange { return exchange.streamReadable(stream) }
        // Decrypted bytes mean the handshake is done, whatever order the events come in.
        if let interception, !interception.handshakeDone { handshakeFinished() }
        if state == .holdingBody { return continueHolding() }
        guard state == .readingHead else { return }
        readHead()
    }

    func streamWritable(_ stream: Stream) {
        exchange?.streamWritable(stream)
    }

    func stream(_ stream: Stream, event: StreamEvent) {
        if let exchange { return exchange.stream(stream, event: event) }
        if let interception, !interception.handshakeDone {
            if event.connected {
                handshakeFinished()
                context.idleReadBuffers.wentIdle(stream)
                return
            }
            logClientHandshakeFailure(host: interception.authority.host, event: event)
            shutdown(.now)
            return
        }
        // Idle between requests (the client has gone quiet), or gone: close without a word.
        shutdown(.now)
    }

    func readHead() {
        // The stream is asked with no retain around it (its length and buffer let nothing go).
        guard let input = withHeld(stream, { $0.inputLength > 0 ? $0.input : nil }) else { return }
        // One snapshot (one lock and retain) bounds the head and serves the request it holds.
        let snapshot = withHeld(context.configStore) { $0.current }
        switch headReader.request(from: input, maxHeadBytes: snapshot.configuration.limits.maxHeaderBytes, arrays: &context.requestHeadArrays) {
        case .incomplete:
            headBegan()
            return
        case .invalid(let error):
            let record = newRecord()
            fail(with: .badRequest(error), record: record, close: true)
        case .complete(let head, let consumed):
            input.drain(consumed)
            headDeadline?.end()
            // Moved, not copied: the snapshot goes on to serve the request.
            dispatch(head, snapshot: consume snapshot)
            // A request without a body waiting behind it leaves the TLS filter holding the
            // space its last read reserved, for as long as the response takes: give it back.
            if state == .exchanging, withHeld(stream, { $0.inputLength == 0 }) { context.idleReadBuffers.wentIdle(stream) }
        }
    }

    // MARK: - Routing

    /// Routes the request with one configuration snapshot, which serves it throughout.
    private func dispatch(_ head: consuming RequestHead, snapshot: consuming ConfigSnapshot) {
        let record = newRecord()
        record.method = head.method
        let setting = listenerSetting(in: snapshot)
        let routed = Routing.route(head, listener: setting.config, inside: interception, snapshot: snapshot, memo: &routeMemo)
        if interception != nil { record.scheme = "https" }
        // A forwarded request's record names the path it goes with (`forward`), so the target
        // as received is made text only for the others.
        if case .forward = routed.route {} else { record.target = head.target }
        if let authority = routed.authority {
            record.host = authority.host
            record.port = Int(authority.port)
            if interception == nil && RequestMethod.equal(head.method, "CONNECT") { record.target = "-" }
        }
        switch routed.proxyUser {
        case .user(let user)?: record.auth = "proxy:\(user)"
        case .rejected?: record.auth = "proxy:rejected"
        case nil: break
        }
        // A forwarded request's snapshot and record move on into its exchange (not copied).
        switch routed.route {
        case .forward(let upstreamTarget, let path, let framing):
            forward(head, to: upstreamTarget, path: path, framing: framing, snapshot: snapshot, record: consume record)
        case .tunnel(let authority):
            openTunnel(to: authority, snapshot: snapshot, record: record)
        case .intercept(let authority, let host, let runtime):
            intercept(authority: authority, host: host, runtime: runtime, record: record)
        case .refuse(let error, let closing):
            fail(with: error, record: record, close: closing)
        }
    }

    private func listenerSetting(in snapshot: ConfigSnapshot) -> ListenerSetting {
        if let listenerSetting, listenerSetting.generation == snapshot.generation { return listenerSetting }
        let setting = ListenerSetting(generation: snapshot.generation, config: listener.config(in: snapshot.configuration))
        listenerSetting = setting
        return setting
    }

    /// The record is consumed: it moves from the dispatch to the exchange without a copy (each
    /// copied its dozen strings, twice per request).
    private func forward(_ head: consuming RequestHead, to upstreamTarget: consuming UpstreamTarget, path: consuming String, framing: BodyFraming,
                         snapshot: consuming ConfigSnapshot,
                         record: consuming AccessRecord, fetched: FetchedCredentials = FetchedCredentials()) {
        // The resuming closures are made only when a request has to wait: made up front, each
        // cost an allocation and a copy of the head and record on every request.
        if !fetched.awsKeys, let plan = upstreamTarget.plan, let role = awsKeysToFetch(for: plan, snapshot: snapshot) {
            // Until the keys come, the record names the target as received.
            record.target = head.target
            let waiting = copy record
            return awaitAWSKeys(role, snapshot: snapshot, record: waiting, closeOnFailure: framing != .none) { [unowned self, head, upstreamTarget, path, snapshot] in
                self.forward(head, to: upstreamTarget, path: path, framing: framing, snapshot: snapshot, record: waiting, fetched: fetched.withAWSKeys())
            }
        }
        record.scheme = upstreamTarget.scheme
        record.host = upstreamTarget.host
        record.port = Int(upstreamTarget.port)
        record.target = path
        switch snapshot.applyInjection(for: upstreamTarget.plan, tokens: fetched.tokens, target: path, headers: head.headers) {
        case .needsToken(let credential):
            // Captured as they are now (the head and path unchanged so far; the record's
            // target fields are set again by the resumed call).
            let waiting = copy record
            awaitToken(TokenWait(credential: credential, tokens: fetched.tokens, snapshot: snapshot, record: waiting, framing: framing) {
                [unowned self, head, upstreamTarget, path, snapshot] tokens in
                self.forward(head, to: upstreamTarget, path: path, framing: framing, snapshot: snapshot, record: waiting,
                             fetched: fetched.with(tokens: tokens))
            })
            return
        case .unchanged:
            break
        case .rewritten(let target, let headers, let resolved):
            path = target
            head.headers = headers
            if !fetched.tokens.isEmpty { record.injectedTokens = (fetched.tokens.keys.sorted(), Date()) }
            if !resolved.isEmpty {
                record.placeholders = resolved.joined(separator: ",")
                Observations.shared.authOutcome(row: upstreamTarget.row, outcome: "placeholder:resolved")
            }
        case .refused(let name):
            // The /status row is read only here and above: most requests resolve nothing.
            Observations.shared.authOutcome(row: upstreamTarget.row, outcome: "placeholder:refused")
            let entry = upstreamTarget.entry.map { "hosts.\"\($0.pattern)\".placeholders" } ?? "a hosts entry's placeholders"
            let authority = Authority(host: upstreamTarget.host, port: upstreamTarget.port)
            fail(with: ProxyError(.httpRequestDenied(status: 403),
                                  details: "the placeholder countersign:\(name) is not resolved toward \(authority); it is resolved only where \(entry) names it"),
                 record: record, close: framing != .none)
            return
        }
        if framing != .none, let hash = upstreamTarget.plan?.signer?.heldBodyHash(for: head) {
            hold(HeldRequest(head: head, target: upstreamTarget, path: path, snapshot: snapshot, record: record), framing: framing, hash: hash)
            return
        }
        startExchange(head, to: upstreamTarget, path: path, framing: framing, snapshot: snapshot, record: record)
    }

    func startExchange(_ head: consuming RequestHead, to upstreamTarget: consuming UpstreamTarget, path: consuming String, framing: BodyFraming,
                       snapshot: consuming ConfigSnapshot,
                       record: consuming AccessRecord) {
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
    private func intercept(authority: Authority, host: HostConfig, runtime: InterceptionRuntime, record: AccessRecord) {
        let ssl: OpaquePointer
        do {
            ssl = try runtime.tls.makeServerSSL(for: authority.host, offerH2: host.http2)
        } catch {
            fail(with: ProxyError(.proxyInternalError, details: "cannot mint a certificate for \(authority.host): \(error)"), record: record, close: true)
            return
        }
        stream.write("HTTP/1.1 200 Connection established\r\nVia: 1.1 countersign\r\n\r\n")
        // The 200 above goes out first; a ClientHello already buffered is read first.
        guard let secured = Stream.acceptingTLS(base: context.base, replacing: stream, ssl: ssl) else {
            shutdown(.now)
            return
        }
        stream = secured
        interception = InterceptedTunnel(authority: authority, host: host)
        // Ciphertext that does not decrypt yet is a head (or the handshake) in progress.
        // Strong, as the stream's delegate is: the stream's close drops the watch. A weak
        // reference gave this connection a side table, which sent its retains and releases
        // (some eleven a request) down the slow path, ~650 instructions a request.
        stream.watchRawReads { [self] in headBegan() }
        record.status = 200
        conclude(record, then: .becameTunnel)
        state = .readingHead
        start()
    }
}
