import CLibevent
import CountersignInterception
import COpenSSL
import CountersignAuth
import CountersignHTTP
import CountersignTrust

/// Identifies upstream connections that may serve each other's requests: the same
/// endpoint, reached with the same TLS policy and identity (a compiled context).
struct UpstreamKey: Hashable, CustomStringConvertible {
    var host: String
    var port: UInt16
    /// The TLS context's identity; nil for plain TCP.
    var tls: ObjectIdentifier?
    /// Whom a connection-bound scheme (NTLM) authenticated this connection as.
    var binding: ConnectionBinding? = nil

    func bound(to binding: ConnectionBinding) -> UpstreamKey {
        var key = self
        key.binding = binding
        return key
    }

    var description: String { "\(tls == nil ? "http" : "https")://\(Authority(host: host, port: port))" }
}

/// Whose a connection is once a connection-bound scheme authenticated it (IIS serves every
/// later request on it as that user).
enum ConnectionBinding: Hashable {
    /// Countersign's own credential, by name within one configuration generation (a reload
    /// may give the name another user): pooled only for exchanges answering with it.
    case credential(String, generation: Int)
    /// The client's own `Authorization: NTLM/Negotiate`: the connection stays with that client
    /// connection (`ClientBoundUpstreams`) and is never pooled.
    case client
}

/// Hears how connecting went.
protocol UpstreamConnectDelegate: AnyObject {
    func upstreamReady(_ connection: UpstreamConnection)
    func upstreamFailed(_ connection: UpstreamConnection, error: ProxyError)
}

/// One connection to an upstream. While connecting it handles its own events: TCP connect,
/// then (for TLS) the handshake and the trust evaluation, before any request byte is sent.
/// Once ready, the user (an exchange or the pool) becomes the stream's delegate.
final class UpstreamConnection: StreamDelegate {
    var key: UpstreamKey
    private(set) var stream: Stream
    let tls: UpstreamTLSContext?
    private let serverName: String
    private weak var connectDelegate: UpstreamConnectDelegate?
    private var handshaking = false
    private var timeout: Double = 10
    private var headerTimeout: Double = 15
    /// Bounds each step whose bytes the peer could trickle (a TLS handshake: connect_timeout;
    /// the parent's answer to CONNECT: header_timeout) from when it began; the read timeout
    /// alone is restarted by every byte. Made on the first such step (a plain connection
    /// to an origin has none).
    private var stepDeadline: Deadline?
    /// Set until the connection through the parent proxy is established: its TLS handshake
    /// (an https parent), then the CONNECT and its answer (unless `forwarding`).
    private var parent: (hop: ParentHop, auth: ExchangeAuthenticator?)?
    /// To the parent itself, for absolute-form requests: no CONNECT.
    private var forwarding = false
    private var parentHandshaking = false
    /// The stream is TLS to the parent (origin TLS, if any, runs inside it).
    private var overParentTLS = false
    private var awaitingConnectAnswer = false
    private var connectAnswerReader = BufferedHeadReader(.response)
    private var parentAnswer: AuthAnswer?
    private weak var workerContext: WorkerContext?
    /// The parent's `CONNECT` answer is bounded like any response head.
    private var maxHeaderBytes = 0
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

    private let base: OpaquePointer

    private init(key: UpstreamKey, stream: Stream, tls: UpstreamTLSContext?, serverName: String, base: OpaquePointer) {
        self.base = base
        self.key = key
        self.stream = stream
        self.tls = tls
        self.serverName = serverName
    }

    /// Whether the stream is a TLS bufferevent (to the origin, or to an https parent), not a plain socket.
    var isTLS: Bool { tls != nil || overParentTLS }

    /// What a client is told when `open` returned nil.
    static func cannotOpen(_ target: String) -> ProxyError {
        if DescriptorBudget.shared.available == 0 {
            return ProxyError(.connectionLimitReached,
                              details: "no descriptor left for a connection to \(target) (RLIMIT_NOFILE budget spent)")
        }
        return ProxyError(.proxyInternalError, details: "could not start a connection to \(target)")
    }

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
        guard let bev = bufferevent_socket_new(context.base, -1, Int32(BEV_OPT_CLOSE_ON_FREE.rawValue)) else {
            DescriptorBudget.shared.release(1)
            return nil
        }
        let keyTLS = forwarding ? via?.tls : tls
        let key = UpstreamKey(host: host, port: port, tls: keyTLS.map(ObjectIdentifier.init))
        let serverName = tls?.policy.serverName(forHost: host) ?? host
        let connection = UpstreamConnection(key: key, stream: Stream(bev: bev, direct: true), tls: tls, serverName: serverName, base: context.base)
        connection.connectDelegate = delegate
        connection.workerContext = context
        connection.http11Only = http11Only
        connection.maxHeaderBytes = snapshot.configuration.limits.maxHeaderBytes
        connection.headerTimeout = snapshot.configuration.limits.headerTimeout
        connection.stream.delegate = connection
        if let via, forwarding {
            // The exchange answers the parent's 407s to its requests itself.
            connection.parent = (via, nil)
            connection.forwarding = true
        } else if let via {
            connection.parent = (via, ExchangeAuthenticator.forParent(runtime: snapshot.auth, parent: via))
            connection.parentAnswer = connection.parent?.auth?.preemptive(connection.connectRequest)
        }
        let timeout = snapshot.configuration.limits.connectTimeout
        connection.timeout = timeout
        connection.stream.setTimeouts(read: timeout, write: timeout)
        connection.stream.enableReadWrite()
        context.metrics.upstreamConnects.add()
        let endpoint = via.map { ($0.host, $0.port) } ?? (host, port)
        bufferevent_socket_connect_hostname(bev, context.dnsBase, AF_UNSPEC, endpoint.0, Int32(endpoint.1))
        return connection
    }

    // MARK: - Connecting

    func streamReadable(_ stream: Stream) {
        if awaitingConnectAnswer { readConnectAnswer() }
    }

    func streamWritable(_ stream: Stream) {}

    func stream(_ stream: Stream, event: StreamEvent) {
        if event.connected {
            if handshaking {
                handshakeFinished()
            } else if parentHandshaking {
                parentHandshakeFinished()
            } else if let own = OwnListeners.reached(by: stream.fd) {
                // Not one byte goes to Countersign's own listener (admin, or a loop).
                fail(ProxyError(.destinationIPProhibited,
                                details: "\(parent.map { $0.hop.name } ?? "\(Authority(host: key.host, port: key.port))") is Countersign's own listening address \(own)"))
            } else {
                SocketOptions.setNoDelay(stream.fd)
                if parent?.hop.tls != nil { startParentHandshake() } else { reachedParent() }
            }
            return
        }
        if awaitingConnectAnswer, let parent {
            fail(ProxyError(.connectionTerminated,
                            details: "\(parent.hop.name) closed the connection during CONNECT \(key.host):\(key.port)"))
            return
        }
        if parentHandshaking, let parent {
            fail(parentHandshakeFailure(event, parent: parent.hop))
            return
        }
        let error = handshaking ? handshakeFailure(event) : connectFailure(event: event, savedErrno: cs_errno())
        fail(error)
    }

    // MARK: - Through the parent proxy

    /// Every CONNECT goes on a connection of its own, on which no handshake ran yet.
    private var connectRequest: AuthRequest {
        var request = AuthRequest(method: "CONNECT", target: "\(Authority(host: key.host, port: key.port))", connectionIsTLS: parent?.hop.tls != nil)
        request.connection = UpstreamConnectionFacts(authenticatedAs: nil)
        return request
    }

    /// The parent answers on this connection (after TLS to it, if any).
    private func reachedParent() {
        if parent == nil || forwarding { tunnelEstablished() } else { sendConnect() }
    }

    /// TLS to an https parent, evaluated with `parent_proxy.trust`, before the CONNECT or
    /// the first request (and so the parent's credentials) is written.
    private func startParentHandshake() {
        guard let hop = parent?.hop, let parentTLS = hop.tls else { return }
        let serverName = parentTLS.policy.serverName(forHost: hop.host)
        guard wrapInTLS(parentTLS.makeSSL(serverName: serverName, cacheKey: "\(Authority(host: hop.host, port: hop.port))")) else {
            fail(ProxyError(.proxyInternalError, details: "cannot start TLS to the \(hop.name)"))
            return
        }
        parentHandshaking = true
        overParentTLS = true
        beginStep(seconds: timeout)
    }

    private func parentHandshakeFinished() {
        parentHandshaking = false
        stepDeadline?.end()
        guard let hop = parent?.hop, let parentTLS = hop.tls, let bev = stream.bev, let ssl = bufferevent_openssl_get_ssl(bev) else { return }
        handshakeCompleted(ssl)
        switch parentTLS.evaluate(ssl: ssl) {
        case .trusted:
            reachedParent()
        case .refused(let refusal):
            fail(trustRefused(refusal, peer: .parent(hop.name)))
        }
    }

    private func parentHandshakeFailure(_ event: StreamEvent, parent hop: ParentHop) -> ProxyError {
        let codes = stream.takeOpenSSLErrors()
        // The parent_proxy.trust policy refused it inside the handshake: say why.
        if let parentTLS = hop.tls, let bev = stream.bev, let ssl = bufferevent_openssl_get_ssl(bev),
           let refusal = parentTLS.refusal(ssl: ssl) {
            return trustRefused(refusal, peer: .parent(hop.name))
        }
        if event.timeout {
            return ProxyError(.connectionTimeout, details: "TLS handshake with the \(hop.name) timed out")
        }
        let sentence = hop.tls?.handshakeFailure(errorCodes: codes) ?? "the TLS handshake failed"
        return ProxyError(.tlsProtocolError, details: "\(hop.name): \(sentence)")
    }

    private func sendConnect() {
        let authority = Authority(host: key.host, port: key.port).description
        var headers = HeaderFields([HeaderField("Host", authority)])
        if let parentAnswer { headers.replaceOrAppend(parentAnswer.headerName, bytes: parentAnswer.value.bytes) }
        headers.append("Via", ForwardExchange.via)
        stream.write(HeadSerializer.request(method: "CONNECT", target: authority, headers: headers))
        awaitingConnectAnswer = true
        beginStep(seconds: headerTimeout)
    }

    private func readConnectAnswer() {
        guard let parent, workerContext != nil, let input = stream.input else { return }
        switch connectAnswerReader.response(from: input, maxHeadBytes: maxHeaderBytes) {
        case .incomplete:
            return
        case .invalid(let error) where error.kind == .headTooLarge:
            fail(ProxyError(.httpResponseHeaderSectionSize, details: "parent proxy answered CONNECT with a head over max_header_bytes (\(maxHeaderBytes))"))
        case .invalid(let error):
            fail(ProxyError(.httpProtocolError, details: "parent proxy answered CONNECT with an invalid head: \(error.detail)"))
        case .complete(let response, let consumed):
            input.drain(consumed)
            awaitingConnectAnswer = false
            stepDeadline?.end()
            if (200..<300).contains(response.status) {
                _ = parent.auth?.complete(response)
                if let failure = parent.auth?.mutualAuthFailure {
                    fail(ProxyError(.httpProtocolError, details: failure))
                    return
                }
                tunnelEstablished()
                return
            }
            answerConnectChallenge(response)
        }
    }

    /// Numbers the first Kerberos tokens asked for: a result for an earlier 407 is dropped.
    private var kerberosRequests = 0
    /// The KDC job making the parent's first token: cancelled when this connection closes.
    private var kerberosJob: KDCJob?

    /// The parent's answer to CONNECT was not a 2xx: a 407 is answered when the rule can,
    /// else the CONNECT fails. A first Kerberos token is made off the loop (the 407's body
    /// waits unread, the connect timeout running) and the 407 decided again with it.
    private func answerConnectChallenge(_ response: ResponseHead) {
        guard let parent, let input = stream.input else { return }
        if response.status == 407, let auth = parent.auth {
            switch auth.decide(on: response, request: connectRequest) {
            case .answer(let next):
                parentAnswer = next
                // The 407's body must go before the next CONNECT on this connection; a parent
                // that closes (or sends an unframed body) gets a new connection.
                let framing = (try? BodyFraming.forResponse(response, requestMethod: "GET")) ?? .untilClose
                if response.allowsKeepAlive, case .contentLength(let length) = framing, input.count >= Int(length) {
                    input.drain(Int(length))
                    sendConnect()
                } else if response.allowsKeepAlive, framing == .none {
                    sendConnect()
                } else {
                    reconnectToParent()
                }
                return
            case .prepareKerberos(let request):
                guard let context = workerContext else { break }
                kerberosRequests += 1
                let number = kerberosRequests
                // The KDC's wait has its own bound, longer than connect_timeout.
                stream.setTimeouts(read: KerberosOffLoop.maximumWait, write: timeout)
                kerberosJob?.cancel()
                kerberosJob = KerberosOffLoop.prepare(request, context: context) { [weak self] prepared in
                    guard let self, self.kerberosRequests == number, self.connectDelegate != nil,
                          let auth = self.parent?.auth else { return }
                    self.kerberosJob = nil
                    self.stream.setTimeouts(read: self.timeout, write: self.timeout)
                    auth.adopt(prepared)
                    self.answerConnectChallenge(response)
                }
                return
            case .passThrough, .fail, .fetchToken:
                break
            }
        }
        let type: ProxyErrorType = response.status == 407 ? .httpRequestDenied(status: 502) : .destinationUnavailable
        let lockOut = parent.auth?.lockOut.map { "; \($0.sentence)" } ?? ""
        fail(ProxyError(type, details: "\(parent.hop.name) answered CONNECT \(key.host):\(key.port) with \(response.status) \(response.reason)\(lockOut)"))
    }

    private func reconnectToParent() {
        guard let parent, let context = workerContext,
              let bev = bufferevent_socket_new(context.base, -1, Int32(BEV_OPT_CLOSE_ON_FREE.rawValue)) else { return }
        let previous = stream
        previous.delegate = nil
        previous.close()
        overParentTLS = false
        stream = Stream(bev: bev, direct: true)
        stream.delegate = self
        stream.setTimeouts(read: timeout, write: timeout)
        stream.enableReadWrite()
        bufferevent_socket_connect_hostname(bev, context.dnsBase, AF_UNSPEC, parent.hop.host, Int32(parent.hop.port))
    }

    private func tunnelEstablished() {
        parent = nil
        if tls != nil { startHandshake() } else { becomeReady() }
    }

    // MARK: - TLS

    private func startHandshake() {
        guard let tls else { return }
        let ssl = tls.makeSSL(serverName: serverName, cacheKey: "\(key.host):\(key.port)")
        if http11Only { UpstreamTLSContext.offerOnlyHTTP11(on: ssl) }
        guard wrapInTLS(ssl) else {
            fail(ProxyError(.proxyInternalError, details: "cannot start TLS to \(key)"))
            return
        }
        handshaking = true
        beginStep(seconds: timeout)
    }

    /// Starts a client handshake with `ssl` (taken over) on this connection: on the socket
    /// itself, or, through an https parent, as a filter over the parent's TLS bufferevent
    /// (the origin's TLS inside the parent's). False when libevent refused.
    private func wrapInTLS(_ ssl: OpaquePointer) -> Bool {
        guard let base = stream.bev.map({ bufferevent_get_base($0) }) ?? nil else {
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

    private func handshakeFinished() {
        handshaking = false
        stepDeadline?.end()
        guard let tls, let bev = stream.bev, let ssl = bufferevent_openssl_get_ssl(bev) else { return }
        handshakeCompleted(ssl)
        switch tls.evaluate(ssl: ssl) {
        case .trusted:
            servedLeaf = tls.servedLeaf(ssl: ssl)
            if let leaf = servedLeaf {
                Observations.shared.servedCertificate(row: observationRow, upstream: upstreamLabel, subject: leaf.subject,
                                                      notAfter: leaf.notAfter, pins: tls.verifiedPath(ssl: ssl).map(\.pin.description))
            }
            if ALPNSelection.negotiated(ssl) == .h2, !adoptHTTP2() { return }
            becomeReady()
        case .refused(let refusal):
            fail(trustRefused(refusal, peer: .origin))
        }
    }

    // MARK: HTTP/2 (h-h2wire)

    /// The origin chose `h2`: an `H2UpstreamSession` takes the TLS stream (and the descriptor's
    /// count) over, and `stream` becomes the near end of its first lane, read and written as
    /// HTTP/1.1 by the exchange and the pool. False (and failed) when the pair could not be made.
    private func adoptHTTP2() -> Bool {
        guard let context = workerContext,
              let (session, lane, near) = H2UpstreamSession.adopt(stream, key: key, limits: context.config.limits, base: base, ended: { [weak context] session in
                  context?.h2Upstreams.remove(session)
                  context?.releaseDescriptorsLater(1)
              }) else {
            fail(ProxyError(.proxyInternalError, details: "cannot start HTTP/2 to \(key)"))
            return false
        }
        countsDescriptor = false
        session.servedLeaf = servedLeaf
        context.h2Upstreams.add(session)
        h2Lane = (session, lane)
        stream = near
        return true
    }

    /// Another exchange's connection on `session` (which had room): ready at once, no socket of its own.
    static func lane(on session: H2UpstreamSession, tls: UpstreamTLSContext?, context: WorkerContext) -> UpstreamConnection? {
        guard let (lane, near) = session.makeLane() else { return nil }
        let connection = UpstreamConnection(key: session.key, stream: near, tls: tls, serverName: session.key.host, base: context.base)
        connection.countsDescriptor = false
        connection.workerContext = context
        connection.h2Lane = (session, lane)
        connection.servedLeaf = session.servedLeaf
        return connection
    }

    /// Counts a finished handshake (to the origin or to an https parent) and its resumption.
    private func handshakeCompleted(_ ssl: OpaquePointer) {
        workerContext?.metrics.upstreamHandshakes.add()
        if SSL_session_reused(ssl) == 1 { workerContext?.metrics.upstreamResumptions.add() }
    }

    /// This upstream's row in the bounded per-host table behind /status and /metrics.
    private var observationRow: String {
        workerContext.map { Observations.row(host: key.host, port: Int(key.port), in: $0.config.hosts) } ?? Observations.otherRow
    }

    private var upstreamLabel: String { "\(Authority(host: key.host, port: key.port))" }

    /// Whose certificate a trust policy refused on this connection.
    private enum TLSPeer {
        case origin
        /// The parent proxy, by its name in messages.
        case parent(String)
    }

    private func trustRefused(_ refusal: TrustRefusal, peer: TLSPeer) -> ProxyError {
        let (name, upstream): (String, String)
        switch peer {
        case .origin: (name, upstream) = (key.host, upstreamLabel)
        case .parent(let parentName): (name, upstream) = (parentName, parentName)
        }
        Observations.shared.trustRefused(row: observationRow, upstream: upstream, details: refusal.details)
        return ProxyError(.tlsCertificateError, details: "\(name): \(refusal.details)")
    }

    private func handshakeFailure(_ event: StreamEvent) -> ProxyError {
        let codes = stream.takeOpenSSLErrors()
        // The policy refused the server inside the handshake (it got an alert): say why.
        if let tls, let bev = stream.bev, let ssl = bufferevent_openssl_get_ssl(bev), let refusal = tls.refusal(ssl: ssl) {
            return trustRefused(refusal, peer: .origin)
        }
        if event.timeout {
            return ProxyError(.connectionTimeout, details: "TLS handshake with \(key.host) port \(key.port) timed out")
        }
        let sentence = tls?.handshakeFailure(errorCodes: codes) ?? "the TLS handshake failed"
        return ProxyError(.tlsProtocolError, details: "\(key.host): \(sentence)")
    }

    private func beginStep(seconds: Double) {
        if stepDeadline == nil { stepDeadline = Deadline(base: base) { [unowned self] in self.stepTimedOut() } }
        stepDeadline?.restart(seconds: seconds)
    }

    /// A handshake or the CONNECT answer took too long, however steadily its bytes came.
    private func stepTimedOut() {
        if awaitingConnectAnswer, let parent {
            fail(ProxyError(.httpResponseTimeout, details: "\(parent.hop.name) did not answer CONNECT \(key.host):\(key.port) within \(Seconds.text(headerTimeout))"))
        } else if parentHandshaking, let parent {
            fail(ProxyError(.connectionTimeout, details: "TLS handshake with the \(parent.hop.name) not completed within \(Seconds.text(timeout))"))
        } else if handshaking {
            fail(ProxyError(.connectionTimeout, details: "TLS handshake with \(key.host) port \(key.port) not completed within \(Seconds.text(timeout))"))
        }
    }

    /// Closes the connection, then tells the delegate (once) why.
    private func fail(_ error: ProxyError) {
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

    /// Turns a failed connect into the error a client sees.
    func connectFailure(event: StreamEvent, savedErrno: Int32) -> ProxyError {
        if let bev = stream.bev {
            let dnsError = bufferevent_socket_get_dns_error(bev)
            if dnsError != 0 {
                let reason = String(cString: evutil_gai_strerror(dnsError))
                return ProxyError(.dnsError, details: "cannot resolve \(key.host): \(reason)")
            }
        }
        if event.timeout {
            return ProxyError(.connectionTimeout, details: "connecting to \(key.host) port \(key.port) timed out")
        }
        switch savedErrno {
        case ECONNREFUSED:
            return ProxyError(.connectionRefused, details: "\(key.host) port \(key.port) refused the connection")
        case ENETUNREACH, EHOSTUNREACH:
            return ProxyError(.destinationIPUnroutable, details: "no route to \(key.host) port \(key.port)")
        default:
            let reason = savedErrno == 0 ? "connection failed" : String(cString: strerror(savedErrno))
            return ProxyError(.destinationUnavailable, details: "cannot connect to \(key.host) port \(key.port): \(reason)")
        }
    }

    func close() {
        connectDelegate = nil
        if let (session, lane) = h2Lane { session.closeLane(lane) }
        stepDeadline?.end()
        kerberosJob?.cancel()
        kerberosJob = nil
        stream.close()
        releaseDescriptor()
    }

    private var countsDescriptor = true
    /// Whether closing this connection frees a descriptor (an HTTP/2 lane's session holds it).
    var holdsDescriptor: Bool { countsDescriptor }
    /// When the pool parked it, as `UpstreamPool`'s count of parkings.
    var parkedOrder = 0

    /// Closes the connection without giving its descriptor back to the budget: the caller
    /// counts it for the socket it opens instead (the socket closes at the end of this loop
    /// iteration, inside the budget's reserve).
    func closeHandingOverDescriptor() {
        countsDescriptor = false
        close()
    }

    private func releaseDescriptor() {
        guard countsDescriptor else { return }
        countsDescriptor = false
        if let workerContext { workerContext.releaseDescriptorsLater(1) } else { DescriptorBudget.shared.release(1) }
    }

    deinit {
        releaseDescriptor()
        // A lane let go of without `close` must not keep its session (and socket) alive.
        if let (session, lane) = h2Lane { session.closeLane(lane) }
    }
}
