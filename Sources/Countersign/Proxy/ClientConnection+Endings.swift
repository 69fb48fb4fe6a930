import CountersignHTTP
import CountersignSupport

/// How whatever this connection carries ends: every exchange, tunnel and proxy answer goes
/// through `conclude` (the one place an access record is written), and the connection itself
/// closes only through `shutdown`.
extension ClientConnection {
    /// Every exchange, tunnel and proxy answer on this connection ends here, and only here is
    /// its access record written; `fate` says what becomes of the connection.
    func conclude(_ record: AccessRecord, then fate: Exchange.ClientFate) {
        // The logger is a `let` of the worker's context, which this connection holds.
        withHeld(context.log) { record.write(to: $0) }
        record.clear()
        // The stream's events are this connection's again after a tunnel (an exchange's
        // come through it all along).
        if tunnel != nil { stream.delegate = self }
        exchange = nil
        // Stored only when there: storing nil over nil still released the old value, a call.
        if tunnel != nil { tunnel = nil }
        releaseHeldBody()
        exchangesServed += 1
        switch fate {
        case .keepAlive:
            guard state != .closing, state != .closed else { return }
            if context.draining { return shutdown(.afterFlush) }
            readNextHead()
        case .closeAfterFlush: shutdown(.afterFlush)
        case .closeNow: shutdown(.now)
        case .gone, .becameTunnel: break
        }
    }

    private func readNextHead() {
        state = .readingHead
        awaitNextHead()
        let stream = self.stream
        let idleTimeout = context.config.limits.idleTimeout
        stream.setTimeouts(read: idleTimeout, write: idleTimeout)
        stream.enableRead()
        if stream.inputLength > 0 {
            readHead()
        } else {
            context.idleReadBuffers.requestEnded(on: stream)
        }
    }

    /// Hands the client and an upstream that answered `101` to a byte tunnel, which carries
    /// the exchange's record to its own end.
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
        stream.enableReadWrite()
        let record = newRecord()
        fail(with: error, record: record, close: true)
    }

    /// Sends a response the proxy made itself, logs it, and either reads the next request
    /// or closes once the response is written.
    func fail(with error: ProxyError, record: AccessRecord, close: Bool) {
        answer(error, record: record, closing: close)
        conclude(record, then: close ? .closeAfterFlush : .keepAlive)
    }

    /// Writes a response the proxy made itself (the connection closes after it when `closing`
    /// or draining) and notes it in `record`, the metrics and /status.
    func answer(_ error: ProxyError, record: AccessRecord, closing: Bool) {
        record.status = error.status
        record.error = error.type.name
        record.errorDetails = error.details
        if tunnel != nil { stream.delegate = self }
        stream.write(error.response(close: closing || context.draining))
        context.metrics.countResponse(status: error.status)
        context.metrics.countError(type: error.type.name)
        if record.host != "-" {
            Observations.shared.exchange(row: Observations.row(host: record.host, port: record.port, in: context.config.hosts), errorType: error.type.name)
        }
        Observations.shared.refused(host: record.host == "-" ? "-" : "\(record.host):\(record.port)", status: error.status, type: error.type.name, details: error.details)
    }

    /// Called on drain: an idle keep-alive connection is closed now, a busy one after its exchange.
    func drainIfIdle() {
        if let http2Session { return http2Session.drain() }
        if state == .readingHead && stream.inputLength == 0 { return shutdown(.now) }
        exchange?.drainBegan()
    }

    enum Shutdown { case afterFlush, now }

    /// The one way this connection closes: at once, or once what is written has gone. Whatever
    /// it carries (an exchange, a tunnel, bound upstreams) ends with it.
    func shutdown(_ how: Shutdown) {
        switch (how, state) {
        case (_, .closed), (.afterFlush, .closing):
            return
        case (.afterFlush, _):
            state = .closing
            headDeadline?.end()
            stream.closeWhenFlushed { [weak self] in self?.shutdown(.now) }
        case (.now, _):
            state = .closed
            headDeadline?.end()
            // Each ends through `conclude`, which lets go of it.
            exchange?.clientClosed()
            tunnel?.clientClosed()
            exchange = nil
            tunnel = nil
            releaseHeldBody()
            boundUpstreams?.closeAll()
            boundUpstreams = nil
            http2Session?.close()
            http2Session = nil
            stream.close()
            context.unregister(self)
            // Last: what listens (an HTTP/2 stream's bridge) may let go of this connection.
            let hook = closedHook
            closedHook = nil
            hook?()
        }
    }
}
