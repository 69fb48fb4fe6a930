import CLibevent
import CountersignConfig
import CountersignHTTP

/// A byte tunnel between the client and an upstream: a blind CONNECT, or a connection
/// after `101 Switching Protocols`. The connect step uses a bufferevent (resolver, connect
/// timeout); once both sides are open the sockets leave their bufferevents and a
/// `SocketRelay` moves the bytes, so an idle tunnel costs a few hundred bytes.
final class Tunnel: StreamDelegate, UpstreamConnectDelegate {
    /// The client owns this tunnel and outlives it.
    private unowned(unsafe) let client: ClientConnection
    private var context: WorkerContext { client.context }
    private let authority: Authority
    /// The configuration the CONNECT (or the upgraded request) was routed with: the tunnel's
    /// limits, parent and observation row all come from this one generation.
    private let snapshot: ConfigSnapshot
    private var limits: Limits { snapshot.configuration.limits }
    private var record: AccessRecord
    private var upstream: UpstreamConnection?
    private var relay: SocketRelay?
    /// Used instead when either side speaks TLS through Countersign.
    private var streamRelay: StreamRelay?
    /// Set once, by `end`: a tunnel ends once.
    private var ending: Ending?

    /// Why a tunnel ends.
    enum Ending {
        /// The upstream could not be reached: the client gets the proxy's answer.
        case connectFailed(ProxyError)
        /// The relay ended (`error`: why, when it was not a clean close) or could not start.
        case finished(error: String?)
        /// The client gave up while the upstream was being reached.
        case clientLeft
        /// The client connection closed for its own reasons (a drain, a timeout).
        case clientClosed
    }

    /// CONNECT: the tunnel connects to `authority` itself and answers `200` when it can.
    init(client: ClientConnection, authority: Authority, snapshot: ConfigSnapshot, record: AccessRecord) {
        self.client = client
        self.authority = authority
        self.snapshot = snapshot
        self.record = record
    }

    /// Upgrade: the upstream connection already exists and has switched protocols.
    init(client: ClientConnection, upgradedUpstream: UpstreamConnection, authority: Authority, snapshot: ConfigSnapshot, record: AccessRecord) {
        self.client = client
        self.authority = authority
        self.snapshot = snapshot
        self.record = record
        self.upstream = upgradedUpstream
    }

    func start() {
        client.stream.delegate = self
        if upstream != nil {
            becomeEstablished()
            return
        }
        // The client is still read while the upstream connects (what it sends early waits in
        // its input, bounded by the read watermark, and becomes the relay's first bytes): a
        // client that gives up is seen at once, and its connect is cancelled with it instead
        // of holding two descriptors until connect_timeout.
        guard let connection = UpstreamConnection.open(host: authority.host, port: authority.port, tls: nil,
                                                       via: snapshot.parent, snapshot: snapshot, context: context, delegate: self) else {
            end(.connectFailed(UpstreamConnection.cannotOpen("\(authority)")))
            return
        }
        if ending == nil { upstream = connection }
    }

    func upstreamReady(_ connection: UpstreamConnection) {
        guard ending == nil else {
            connection.close()
            return
        }
        upstream = connection
        record.status = 200
        client.stream.write("HTTP/1.1 200 Connection established\r\nVia: 1.1 countersign\r\n\r\n")
        context.metrics.countResponse(status: 200)
        Observations.shared.exchange(row: Observations.row(host: authority.host, port: Int(authority.port), in: snapshot.configuration.hosts), errorType: nil)
        becomeEstablished()
    }

    func upstreamFailed(_ connection: UpstreamConnection, error: ProxyError) {
        end(.connectFailed(error))
    }

    private func becomeEstablished() {
        guard let upstream else { return }
        context.metrics.tunnelsOpen.add(1)
        if upstream.isTLS || client.isIntercepted {
            let relay = StreamRelay(client: client.stream, upstream: upstream.stream, budget: context.bufferBudget,
                                    idleTimeout: limits.tunnelIdleTimeout, halfCloseTimeout: limits.halfCloseTimeout)
            relay.onFinish = { [weak self] reason in self?.end(.finished(error: reason)) }
            streamRelay = relay
            relay.start()
            return
        }
        // Whatever is already buffered either way (the 200 or 101 head, a TLS ClientHello
        // sent right behind CONNECT, a server banner) becomes the relay's first bytes.
        guard let toClient = OwnedEventBuffer(), let toUpstream = OwnedEventBuffer() else {
            end(.finished(error: ProxyErrorType.proxyInternalError.name))
            return
        }
        let clientFD = client.stream.detachSocket(movingInputTo: toUpstream.buffer, outputTo: toClient.buffer)
        let upstreamFD = upstream.stream.detachSocket(movingInputTo: toClient.buffer, outputTo: toUpstream.buffer)
        self.upstream = nil
        let relay = SocketRelay(context: context, clientFD: clientFD, upstreamFD: upstreamFD,
                                toClient: toClient, toUpstream: toUpstream, idleTimeout: limits.tunnelIdleTimeout,
                                halfCloseTimeout: limits.halfCloseTimeout)
        relay.onFinish = { [weak self] reason in self?.end(.finished(error: reason)) }
        self.relay = relay
        relay.start()
    }

    // The bufferevent callbacks matter only while connecting: bytes wait, an end cancels.
    func streamReadable(_ stream: Stream) {}
    func streamWritable(_ stream: Stream) {}

    func stream(_ stream: Stream, event: StreamEvent) {
        if event.connected { return }
        // Only the client's stream reports here while connecting: it gave up.
        end(.clientLeft)
    }

    /// The client connection closed for its own reasons (a drain, a timeout).
    func clientClosed() {
        end(.clientClosed)
    }

    /// The one end: the relay stops and its counts go to the record, the upstream closes, and
    /// the client connection takes the record and closes as the reason says.
    func end(_ reason: Ending) {
        guard ending == nil else { return }
        ending = reason
        if let relay {
            record.bytesIn = relay.client.bytesRead
            record.bytesOut = relay.upstream.bytesRead
            relay.onFinish = nil
            relay.finish(nil)
            self.relay = nil
            context.metrics.tunnelsOpen.add(-1)
        } else if let streamRelay {
            record.bytesIn = streamRelay.bytesFromClient
            record.bytesOut = streamRelay.bytesFromUpstream
            streamRelay.onFinish = nil
            streamRelay.finish(nil)
            self.streamRelay = nil
            context.metrics.tunnelsOpen.add(-1)
        } else if record.status == 200 || record.status == 101 {
            context.metrics.tunnelsOpen.add(-1)
        }
        upstream?.close()
        upstream = nil
        switch reason {
        case .connectFailed(let error):
            client.answer(error, record: record, closing: true)
            client.conclude(record, then: .closeAfterFlush)
        case .finished(let error):
            if let error { record.error = error }
            client.conclude(record, then: .closeNow)
        case .clientLeft:
            record.error = "client_closed"
            client.conclude(record, then: .closeNow)
        case .clientClosed:
            client.conclude(record, then: .gone)
        }
    }
}
