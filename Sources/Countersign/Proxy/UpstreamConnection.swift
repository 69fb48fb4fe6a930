import CLibevent
import COpenSSL
import CountersignAuth
import CountersignHTTP
import CountersignTrust

/// Hears how connecting went.
protocol UpstreamConnectDelegate: AnyObject {
    func upstreamReady(_ connection: UpstreamConnection)
    func upstreamFailed(_ connection: UpstreamConnection, error: ProxyError)
}

/// One connection to an upstream. While connecting it handles its own events, each step
/// decided by its `UpstreamDial`: TCP connect, TLS to an https parent, the CONNECT through it
/// and its 407s, then TLS to the origin and the trust evaluation, before any request byte is
/// sent. Once ready, the user (an exchange or the pool) becomes the stream's delegate.
final class UpstreamConnection: StreamDelegate {
    /// A connection bound to whom it authenticated as (`bound(to:)`) belongs to another bucket.
    var key: UpstreamKey { didSet { poolBucket = nil } }
    /// The pool bucket this connection was last taken from or parked in (`UpstreamPool`), so
    /// putting it back needs no lookup by key.
    var poolBucket: UpstreamPoolBucket?
    private(set) var stream: Stream
    let tls: UpstreamTLSContext?
    private let serverName: String
    private weak var connectDelegate: UpstreamConnectDelegate?
    private var dial: UpstreamDial
    /// The parent proxy, when the connection goes through one.
    let parentHop: ParentHop?
    /// Answers the parent's 407s to the CONNECT (`parent_proxy.auth`), and the answer it holds.
    private var parentAuth: ExchangeAuthenticator?
    private var parentAnswer: AuthAnswer?
    /// Bounds each step whose bytes the peer could trickle (a TLS handshake: connect_timeout;
    /// the parent's answer to CONNECT: header_timeout) from when it began; the read timeout
    /// alone is restarted by every byte. Made on the first such step (a plain connection
    /// to an origin has none).
    private var stepDeadline: Deadline?
    /// Reads the parent's answers to CONNECT (one per CONNECT written on this connection).
    private var connectAnswer: ConnectAnswerReader
    private(set) weak var workerContext: WorkerContext?
    /// The certificate the upstream served (TLS only), for channel binding and metrics.
    private(set) var servedLeaf: Certificate?
    /// ALPN offers `http/1.1` only on this connection (see `open`).
    private var http11Only = false
    /// Whether this connection is a lane of an HTTP/2 connection.
    var isHTTP2: Bool { h2Lane != nil }
    /// When the origin chose `h2`: the session and this connection's lane of it (`stream` is
    /// then the lane's near end).
    private var h2Lane: (session: H2UpstreamSession, lane: H2UpstreamSession.Lane)?
    /// Whether this connection has already carried an exchange (a reused connection may
    /// have been closed by the server in the meantime, which makes a retry safe).
    var reused = false

    let base: OpaquePointer
    private var timeout: Double { dial.plan.connectTimeout }

    /// Made by `open`, or as a lane of an HTTP/2 session (UpstreamConnection+HTTP2.swift).
    init(key: UpstreamKey, stream: Stream, tls: UpstreamTLSContext?, serverName: String, dial: UpstreamDial, parent: ParentHop?,
                 maxHeaderBytes: Int, base: OpaquePointer) {
        self.base = base
        connectAnswer = ConnectAnswerReader(maxHeadBytes: maxHeaderBytes)
        self.key = key
        self.stream = stream
        self.tls = tls
        self.serverName = serverName
        self.dial = dial
        self.parentHop = parent
    }

    /// Whether the stream is a TLS bufferevent (to the origin, or to an https parent), not a plain socket.
    var isTLS: Bool { tls != nil || dial.plan.parentSecurity == .tls }

    /// Starts resolving, connecting and (with `tls`) the handshake; the delegate hears the
    /// result. It may hear it before this returns (a refusal can be immediate).
    /// With `via`, the TCP connection goes to the parent proxy (TLS first for an https
    /// parent), which is asked to CONNECT to `host:port` (its 407s answered with
    /// `parent_proxy.auth`) before any origin TLS starts. With `forwarding`, the connection
    /// is to the parent itself (`host:port` are its own), for absolute-form requests.
    /// `snapshot`: the configuration of the exchange that opens it (the current one if nil),
    /// so one exchange never mixes two configurations across a reload.
    /// `http11Only`: ALPN offers only `http/1.1` whatever the policy (an Upgrade needs it).
    static func open(host: String, port: UInt16, tls: UpstreamTLSContext?, via: ParentHop? = nil, forwarding: Bool = false,
                     http11Only: Bool = false, snapshot: ConfigSnapshot? = nil, context: WorkerContext,
                     delegate: UpstreamConnectDelegate) -> UpstreamConnection? {
        let snapshot = snapshot ?? context.configStore.current
        // Its socket counts against the descriptor budget until `close` (or deinit, when
        // a relay took the socket over and counts it itself).
        // With the budget spent, a parked connection gives its descriptor to this new one:
        // a spare connection to one host must not refuse a request to another.
        guard DescriptorBudget.shared.take(1) || context.pool.evictOneForItsDescriptor() else { return nil }
        guard let stream = Stream.unconnected(base: context.base) else {
            DescriptorBudget.shared.release(1)
            return nil
        }
        let keyTLS = forwarding ? via?.tls : tls
        let key = UpstreamKey(host: host, port: port, tls: keyTLS.map(ObjectIdentifier.init))
        let serverName = tls?.policy.serverName(forHost: host) ?? host
        let limits = snapshot.configuration.limits
        // The exchange answers the parent's 407s to its own (forwarded) requests.
        let parentAuth = forwarding ? nil : via.flatMap { ExchangeAuthenticator.forParent(runtime: snapshot.auth, parent: $0) }
        var plan = UpstreamDial.Plan(origin: Authority(host: host, port: port), originSecurity: tls == nil ? .plain : .tls,
                                     connectTimeout: limits.connectTimeout, headerTimeout: limits.headerTimeout)
        if let via {
            let security: UpstreamDial.Plan.Security = via.tls == nil ? .plain : .tls
            plan.hop = forwarding ? .parentForwarding(name: via.name, security: security)
                                  : .parentConnect(name: via.name, security: security, answersChallenges: parentAuth != nil)
        }
        let connection = UpstreamConnection(key: key, stream: stream, tls: tls, serverName: serverName,
                                            dial: UpstreamDial(plan), parent: via, maxHeaderBytes: limits.maxHeaderBytes, base: context.base)
        connection.connectDelegate = delegate
        connection.workerContext = context
        connection.http11Only = http11Only
        connection.stream.delegate = connection
        connection.parentAuth = parentAuth
        connection.parentAnswer = parentAuth?.preemptive(RequestFacts(connection.connectRequest), connection.connectRequest)
        connection.stream.setTimeouts(read: plan.connectTimeout, write: plan.connectTimeout)
        connection.stream.enableReadWrite()
        context.metrics.upstreamConnects.add()
        let endpoint = via.map { ($0.host, $0.port) } ?? (host, port)
        stream.connect(dnsBase: context.dnsBase, host: endpoint.0, port: endpoint.1)
        return connection
    }

    // MARK: - Connecting

    func streamReadable(_ stream: Stream) {
        // header_timeout bounds the answer whole, a 407's body dropped included.
        guard let input = stream.input, let trash = workerContext?.staging,
              let event = connectAnswer.event(for: dial.reading, from: input, trash: trash) else { return }
        perform(dial.handle(event))
    }

    func streamWritable(_ stream: Stream) {}

    func stream(_ stream: Stream, event: StreamEvent) {
        if event.connected {
            // A handshake's deadline ends with it, before its verdict.
            stepDeadline?.end()
            perform(dial.handle(.connected))
        } else {
            perform(dial.handle(.streamFailed), streamEvent: event)
        }
    }

    /// Does what the dial asks, feeding it back what follows at once.
    private func perform(_ action: UpstreamDial.Action, streamEvent: StreamEvent? = nil) {
        switch action {
        case .checkSocket:
            let own = OwnListeners.reached(by: stream.fd)
            // Not one byte goes to Countersign's own listener (admin, or a loop).
            if own == nil { SocketOptions.setNoDelay(stream.fd) }
            perform(dial.handle(.socketChecked(ownListener: own.map { "\($0)" })))
        case .startTLS(let peer):
            startHandshake(with: peer)
        case .evaluateTrust(let peer):
            perform(dial.handle(.trustEvaluated(evaluateTrust(of: peer))))
        case .sendConnect:
            sendConnect()
        case .discardChallengeBody(let framing):
            // Within the CONNECT's header_timeout still running (a new one after a Kerberos
            // token was made); its bytes may all be here already.
            beginStep(seconds: dial.plan.headerTimeout, keepingARunningOne: true)
            connectAnswer.expectChallengeBody(framing)
            streamReadable(stream)
        case .resendConnect(let answer):
            parentAnswer = answer
            sendConnect()
        case .reconnectToParent(let answer):
            // TCP has the stream's own timeout.
            stepDeadline?.end()
            parentAnswer = answer
            reconnectToParent()
        case .completeParentAuth(let response):
            stepDeadline?.end()
            _ = parentAuth?.complete(response)
            perform(dial.handle(.parentAuthCompleted(mutualAuthFailure: parentAuth?.mutualAuthFailure)))
        case .decideChallenge(let response):
            guard let parentAuth else { preconditionFailure("UpstreamDial: a challenge decided without parent_proxy.auth") }
            let decision = parentAuth.decide(on: response, request: connectRequest)
            perform(dial.handle(.challengeDecided(decision, lockOut: parentAuth.lockOut?.sentence)))
        case .prepareParentCredential(let request):
            stepDeadline?.end()
            prepareParentCredential(request)
        case .failDescribing(let step):
            let event = streamEvent ?? StreamEvent(flags: Int16(BEV_EVENT_ERROR))
            switch step {
            case .tcp: fail(connectFailure(event: event, savedErrno: cs_errno()))
            case .parentHandshake: fail(handshakeFailure(event, peer: .parent))
            case .originHandshake: fail(handshakeFailure(event, peer: .origin))
            }
        case .fail(let error):
            fail(error)
        case .ready:
            // An origin that chose h2 makes this connection the first lane of a session.
            guard adoptHTTP2IfNegotiated() else { return }
            becomeReady()
        case .nothing:
            break
        }
    }

    // MARK: - Through the parent proxy

    /// Every CONNECT goes on a connection of its own, on which no handshake ran yet.
    private var connectRequest: AuthRequest {
        var request = AuthRequest(method: "CONNECT", target: "\(Authority(host: key.host, port: key.port))", connectionIsTLS: parentHop?.tls != nil)
        request.connection = UpstreamConnectionFacts(authenticatedAs: nil)
        return request
    }

    private func sendConnect() {
        let authority = Authority(host: key.host, port: key.port).description
        var headers = HeaderFields([HeaderField("Host", authority)])
        if let parentAnswer { headers.replaceOrAppend(parentAnswer.headerName, bytes: parentAnswer.value.bytes) }
        headers.append("Via", ForwardExchange.via)
        stream.write(HeadSerializer.request(method: "CONNECT", target: authority, headers: headers))
        beginStep(seconds: dial.plan.headerTimeout)
    }

    /// Numbers the first Kerberos tokens asked for: a result for an earlier 407 is dropped.
    private var kerberosRequests = 0
    /// The KDC job making the parent's first token: cancelled when this connection closes.
    private var kerberosJob: KDCJob?

    /// A first Kerberos token is made off the loop (the 407's body waits unread, the connect
    /// timeout running) and the 407 decided again with it.
    private func prepareParentCredential(_ request: KerberosRequest) {
        guard let context = workerContext else {
            return perform(dial.handle(.stepImpossible(ProxyError(.proxyInternalError, details: "no worker to make a Kerberos token on"))))
        }
        kerberosRequests += 1
        let number = kerberosRequests
        // The KDC's wait has its own bound, longer than connect_timeout.
        stream.setTimeouts(read: KerberosOffLoop.maximumWait, write: timeout)
        kerberosJob?.cancel()
        kerberosJob = KerberosOffLoop.prepare(request, context: context) { [weak self] prepared in
            guard let self, self.kerberosRequests == number, self.connectDelegate != nil, let auth = self.parentAuth else { return }
            self.kerberosJob = nil
            self.stream.setTimeouts(read: self.timeout, write: self.timeout)
            auth.adopt(prepared)
            self.perform(self.dial.handle(.parentCredentialPrepared))
        }
    }

    private func reconnectToParent() {
        guard let parentHop, let context = workerContext,
              let next = Stream.unconnected(base: context.base) else { return }
        let previous = stream
        previous.delegate = nil
        previous.close()
        stream = next
        stream.delegate = self
        stream.setTimeouts(read: timeout, write: timeout)
        stream.enableReadWrite()
        stream.connect(dnsBase: context.dnsBase, host: parentHop.host, port: parentHop.port)
    }

    // MARK: - TLS

    /// TLS to an https parent is evaluated with `parent_proxy.trust` before the CONNECT or the
    /// first request (and so the parent's credentials) is written; TLS to the origin, with its
    /// host's policy, before any request byte.
    private func startHandshake(with peer: UpstreamDial.TLSPeer) {
        let ssl: OpaquePointer
        switch peer {
        case .parent:
            guard let hop = parentHop, let parentTLS = hop.tls else { preconditionFailure("UpstreamDial: parent TLS without a TLS parent") }
            ssl = parentTLS.makeSSL(serverName: parentTLS.policy.serverName(forHost: hop.host), cacheKey: "\(Authority(host: hop.host, port: hop.port))")
            // A CONNECT is an HTTP/1.1 request: the parent is never offered h2.
            UpstreamTLSContext.offerOnlyHTTP11(on: ssl)
        case .origin:
            guard let tls else { preconditionFailure("UpstreamDial: origin TLS without a TLS context") }
            ssl = tls.makeSSL(serverName: serverName, cacheKey: "\(key.host):\(key.port)")
            if http11Only { UpstreamTLSContext.offerOnlyHTTP11(on: ssl) }
        }
        guard wrapInTLS(ssl) else {
            let name = peer == .parent ? "the \(parentHop?.name ?? "parent proxy")" : "\(key)"
            return perform(dial.handle(.stepImpossible(ProxyError(.proxyInternalError, details: "cannot start TLS to \(name)"))))
        }
        beginStep(seconds: timeout)
    }

    /// Starts a client handshake with `ssl` (taken over) on this connection: on the socket
    /// itself, or, through an https parent, as a filter over the parent's TLS bufferevent
    /// (the origin's TLS inside the parent's). False when libevent refused.
    private func wrapInTLS(_ ssl: OpaquePointer) -> Bool {
        guard let base = stream.base else {
            SSL_free(ssl)
            return false
        }
        let previous = stream
        let wrapped: Stream?
        if previous.direct {
            guard let scratch = OwnedEventBuffer() else {
                SSL_free(ssl)
                return false
            }
            let fd = previous.detachSocket(movingInputTo: scratch.buffer, outputTo: scratch.buffer)
            wrapped = Stream.tlsSocket(base: base, fd: fd, ssl: ssl, state: BUFFEREVENT_SSL_CONNECTING)
        } else {
            wrapped = Stream.tlsFilter(base: base, replacing: previous, ssl: ssl, state: BUFFEREVENT_SSL_CONNECTING)
        }
        // On failure the SSL is freed.
        guard let wrapped else { return false }
        stream = wrapped
        stream.delegate = self
        previous.delegate = nil
        stream.setTimeouts(read: timeout, write: timeout)
        stream.enableReadWrite()
        return true
    }

    /// The trust policy's verdict on the finished handshake with `peer`; nil when trusted.
    private func evaluateTrust(of peer: UpstreamDial.TLSPeer) -> ProxyError? {
        guard let context = peer == .parent ? parentHop?.tls : tls, let ssl = stream.ssl else {
            return ProxyError(.proxyInternalError, details: "the TLS connection to \(key) is gone")
        }
        handshakeCompleted(ssl)
        switch context.evaluate(ssl: ssl) {
        case .trusted:
            guard peer == .origin else { return nil }
            servedLeaf = context.servedLeaf(ssl: ssl)
            if let leaf = servedLeaf {
                Observations.shared.servedCertificate(row: observationRow, upstream: upstreamLabel, subject: leaf.subject,
                                                      notAfter: leaf.notAfter, pins: context.verifiedPath(ssl: ssl).map(\.pin.description))
            }
            return nil
        case .refused(let refusal):
            return trustRefused(refusal, peer: peer)
        }
    }

    /// Counts a finished handshake (to the origin or to an https parent) and its resumption.
    private func handshakeCompleted(_ ssl: OpaquePointer) {
        workerContext?.metrics.upstreamHandshakes.add()
        if SSL_session_reused(ssl) == 1 { workerContext?.metrics.upstreamResumptions.add() }
    }

    private func beginStep(seconds: Double, keepingARunningOne: Bool = false) {
        if stepDeadline == nil { stepDeadline = Deadline(base: base) { [unowned self] in self.perform(self.dial.handle(.stepTimedOut)) } }
        if keepingARunningOne { stepDeadline?.begin(seconds: seconds) } else { stepDeadline?.restart(seconds: seconds) }
    }

    /// Closes the connection, then tells the delegate (once) why.
    func fail(_ error: ProxyError) {
        let delegate = connectDelegate
        close()
        delegate?.upstreamFailed(self, error: error)
    }

    private func becomeReady() {
        let delegate = connectDelegate
        connectDelegate = nil
        stream.delegate = nil
        delegate?.upstreamReady(self)
    }

    func close() {
        connectDelegate = nil
        if let (session, lane) = h2Lane { session.closeLane(lane) }
        stepDeadline?.end()
        kerberosJob?.cancel()
        kerberosJob = nil
        stream.close()
        descriptor.giveBack(via: workerContext)
    }

    private var descriptor = DescriptorShare()
    /// Whether closing this connection frees a descriptor (an HTTP/2 lane's session holds it).
    var holdsDescriptor: Bool { descriptor.isCounted }
    /// When the pool parked it, as `UpstreamPool`'s count of parkings.
    var parkedOrder = 0

    /// This connection becomes `lane` of an HTTP/2 session, which holds the socket and its
    /// descriptor: `near` (the lane's end of its pair) is what the exchange reads and writes.
    func becomeLane(_ lane: H2UpstreamSession.Lane, of session: H2UpstreamSession, near: Stream, context: WorkerContext) {
        workerContext = context
        descriptor.handOver()
        h2Lane = (session, lane)
        servedLeaf = servedLeaf ?? session.servedLeaf
        stream = near
    }

    /// Closes the connection without giving its descriptor back to the budget: the caller
    /// counts it for the socket it opens instead (the socket closes at the end of this loop
    /// iteration, inside the budget's reserve).
    func closeHandingOverDescriptor() {
        descriptor.handOver()
        close()
    }

    deinit {
        descriptor.giveBack(via: workerContext)
        // A lane let go of without `close` must not keep its session (and socket) alive.
        if let (session, lane) = h2Lane { session.closeLane(lane) }
    }
}
