import CEventSSL
import CountersignConfig
import CountersignHTTP

/// One client connection: reads request heads, one at a time (so pipelined requests are
/// answered in order), and hands each to an exchange or a tunnel. Bytes of the next
/// request wait in the input buffer, bounded by the read watermark.
final class ClientConnection: StreamDelegate {
    enum State { case readingHead, exchanging, tunneling, closing, closed }

    let context: WorkerContext
    let stream: Stream
    let peer: PeerAddress
    let listener: ListenerRuntime
    private(set) var state: State = .readingHead
    private var exchangesServed = 0
    private var exchange: ForwardExchange?
    private var tunnel: Tunnel?
    private lazy var headTimer = Timer(base: context.base) { [weak self] in self?.headTimedOut() }
    private var headTimerArmed = false

    init(context: WorkerContext, stream: Stream, peer: PeerAddress, listener: ListenerRuntime) {
        self.context = context
        self.stream = stream
        self.peer = peer
        self.listener = listener
    }

    func start() {
        let limits = context.config.limits
        stream.delegate = self
        stream.setWatermarks(readHigh: max(limits.maxHeaderBytes + 1024, context.bufferBudget), writeLow: context.bufferBudget / 4)
        stream.setTimeouts(read: limits.idleTimeout, write: limits.idleTimeout)
        armHeadTimer()
        stream.enableReadWrite()
    }

    // MARK: - Reading heads

    func streamReadable(_ stream: Stream) {
        guard state == .readingHead else { return }
        readHead()
    }

    func streamWritable(_ stream: Stream) {
        if state == .closing && stream.outputLength == 0 { close() }
    }

    func stream(_ stream: Stream, event: StreamEvent) {
        if event.timeout && state == .readingHead {
            // Idle between requests: the client has gone quiet; close without a word.
            close()
            return
        }
        close()
    }

    private func armHeadTimer() {
        headTimer.arm(seconds: context.config.limits.headerTimeout)
        headTimerArmed = true
    }

    private func headTimedOut() {
        guard state == .readingHead else { return }
        if stream.inputLength == 0 && exchangesServed > 0 {
            // Between requests the idle timeout rules, not the head timeout.
            armHeadTimer()
            return
        }
        if stream.inputLength == 0 {
            close()
            return
        }
        var record = AccessRecord(client: peer.description)
        fail(with: ProxyError(status: 408, type: "http_request_error", details: "request head not received within \(Seconds.text(context.config.limits.headerTimeout))"), record: &record, close: true)
    }

    private func readHead() {
        let available = stream.inputLength
        guard available > 0 else { return }
        let limits = context.config.limits
        let window = min(available, limits.maxHeaderBytes + 64)
        guard let pointer = evbuffer_pullup(stream.input, window) else { return }
        let parse = HeadParser.parseRequest(UnsafeRawBufferPointer(start: pointer, count: window), maxHeadBytes: limits.maxHeaderBytes)
        switch parse {
        case .incomplete:
            return
        case .invalid(let error):
            var record = AccessRecord(client: peer.description)
            fail(with: .badRequest(error), record: &record, close: true)
        case .complete(let head, let consumed):
            evbuffer_drain(stream.input, consumed)
            headTimer.cancel()
            headTimerArmed = false
            dispatch(head)
        }
    }

    // MARK: - Routing

    private func dispatch(_ head: RequestHead) {
        let snapshot = context.configStore.current
        let configuration = snapshot.configuration
        var record = AccessRecord(client: peer.description)
        record.method = head.method
        record.path = AccessRecord.loggablePath(head.target)

        let target: RequestTarget
        let framing: BodyFraming
        do {
            target = try RequestTarget.parse(head.target, method: head.method)
            framing = try BodyFraming.forRequest(head)
        } catch let error as HTTPParseError {
            fail(with: .badRequest(error), record: &record, close: true)
            return
        } catch {
            fail(with: ProxyError(status: 400, type: "http_request_error", details: "invalid request"), record: &record, close: true)
            return
        }

        let listenerConfig = listener.config(in: configuration)
        if let proxyAuth = listenerConfig.proxyAuth {
            switch ProxyAuthorization.check(head.headers, against: proxyAuth) {
            case .allowed(let user):
                record.auth = "proxy:\(user)"
            case .denied(let reason):
                record.auth = "proxy:rejected"
                var error = ProxyError(status: 407, type: "http_request_denied", details: reason)
                error.extraHeaders = [("Proxy-Authenticate", ProxyAuthorization.challenge(realm: proxyAuth.realm))]
                fail(with: error, record: &record, close: framing != .none)
                return
            }
        }

        switch target {
        case .authority(let authority):
            record.host = authority.host
            record.port = Int(authority.port)
            record.path = "-"
            openTunnel(to: authority, head: head, configuration: configuration, record: record)
        case .absolute(let scheme, let authority, let path):
            record.scheme = scheme.rawValue
            record.host = authority.host
            record.port = Int(authority.port)
            record.path = AccessRecord.loggablePath(path)
            guard listenerConfig.mode == .forward else {
                fail(with: ProxyError(status: 400, type: "http_request_error", details: "this listener is a gateway: send origin-form requests"), record: &record, close: framing != .none)
                return
            }
            if configuration.hosts.lookup(host: authority.host, port: authority.port) == nil && configuration.unlistedHosts == .deny {
                fail(with: .denied("\(authority.host) is not a configured host"), record: &record, close: framing != .none)
                return
            }
            guard scheme == .http else {
                fail(with: ProxyError(status: 400, type: "http_request_error", details: "send https:// requests through CONNECT"), record: &record, close: framing != .none)
                return
            }
            forward(head, to: UpstreamKey(host: authority.host, port: authority.port, tls: false), authority: authority, path: path, framing: framing, record: record)
        case .origin(let path):
            guard listenerConfig.mode == .gateway, let upstream = listenerConfig.upstream else {
                fail(with: ProxyError(status: 400, type: "http_request_error", details: "a forward proxy needs an absolute URI (http://host/path)"), record: &record, close: framing != .none)
                return
            }
            let authority = Authority(host: upstream.host, port: upstream.port)
            record.scheme = upstream.scheme
            record.host = authority.host
            record.port = Int(authority.port)
            guard upstream.scheme == "http" else {
                fail(with: ProxyError(status: 502, type: "proxy_configuration_error", details: "gateway upstream \(upstream.scheme)://\(authority) needs upstream TLS, which this build does not provide yet"), record: &record, close: framing != .none)
                return
            }
            forward(head, to: UpstreamKey(host: authority.host, port: authority.port, tls: false), authority: authority, path: path, framing: framing, record: record)
        case .asterisk:
            fail(with: ProxyError(status: 400, type: "http_request_error", details: "OPTIONS * is not forwarded"), record: &record, close: false)
        }
    }

    private func forward(_ head: RequestHead, to key: UpstreamKey, authority: Authority, path: String, framing: BodyFraming, record: AccessRecord) {
        state = .exchanging
        let exchange = ForwardExchange(client: self, head: head, key: key, authority: authority, path: path, framing: framing, record: record)
        self.exchange = exchange
        exchange.start()
    }

    private func openTunnel(to authority: Authority, head: RequestHead, configuration: Configuration, record: AccessRecord) {
        var record = record
        let listed = configuration.hosts.lookup(host: authority.host, port: authority.port) != nil
        if !listed && configuration.unlistedHosts == .deny {
            fail(with: .denied("\(authority.host) is not a configured host"), record: &record, close: true)
            return
        }
        state = .tunneling
        stream.delegate = nil
        let tunnel = Tunnel(client: self, authority: authority, record: record)
        self.tunnel = tunnel
        tunnel.start()
    }

    // MARK: - Ends of exchanges

    /// Called by the exchange when its response has been handed to the output buffer.
    func exchangeFinished(keepAlive: Bool) {
        exchange = nil
        exchangesServed += 1
        guard state == .exchanging else { return }
        stream.delegate = self
        if keepAlive && !context.draining {
            state = .readingHead
            stream.setTimeouts(read: context.config.limits.idleTimeout, write: context.config.limits.idleTimeout)
            stream.enableRead()
            armHeadTimer()
            if stream.inputLength > 0 { readHead() }
        } else {
            closeAfterFlush()
        }
    }

    /// Hands the client and an upstream that answered `101` to a byte tunnel.
    func switchToTunnel(upstream: UpstreamConnection, record: AccessRecord) {
        exchange = nil
        state = .tunneling
        let tunnel = Tunnel(client: self, upgradedUpstream: upstream, authority: Authority(host: upstream.key.host, port: upstream.key.port), record: record)
        self.tunnel = tunnel
        tunnel.start()
    }

    /// Answers a connection that may not be served (allow list) and closes it.
    func refuse(_ error: ProxyError) {
        stream.delegate = self
        stream.enableReadWrite()
        var record = AccessRecord(client: peer.description)
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
        record.error = error.type
        stream.delegate = self
        stream.write(error.response(close: close || context.draining))
        context.metrics.countResponse(status: error.status)
        context.metrics.countError(type: error.type)
        record.write(to: context.log)
        exchange = nil
        if close || context.draining {
            closeAfterFlush()
        } else {
            exchangesServed += 1
            state = .readingHead
            armHeadTimer()
            if stream.inputLength > 0 { readHead() }
        }
    }

    func closeAfterFlush() {
        state = .closing
        headTimer.cancel()
        stream.disableRead()
        if stream.outputLength == 0 { close() }
    }

    /// Called on drain: an idle keep-alive connection is closed now, a busy one after its exchange.
    func drainIfIdle() {
        if state == .readingHead && stream.inputLength == 0 { close() }
    }

    func close() {
        guard state != .closed else { return }
        state = .closed
        headTimer.cancel()
        exchange?.clientClosed()
        exchange = nil
        tunnel?.clientClosed()
        tunnel = nil
        stream.close()
        context.unregister(self)
    }
}
