import CEventSSL
import CountersignHTTP

/// A byte tunnel between the client and an upstream: a blind CONNECT, or a connection
/// after `101 Switching Protocols`. Bytes move buffer to buffer; each side stops being
/// read while the other side's output is above the budget.
final class Tunnel: StreamDelegate {
    private unowned let client: ClientConnection
    private var context: WorkerContext { client.context }
    private let authority: Authority
    private var record: AccessRecord
    private var upstream: UpstreamConnection?
    private var established = false
    private var closing = false
    private var done = false
    private var lastActivity = MonotonicClock.now()

    /// CONNECT: the tunnel connects to `authority` itself and answers `200` when it can.
    init(client: ClientConnection, authority: Authority, record: AccessRecord) {
        self.client = client
        self.authority = authority
        self.record = record
    }

    /// Upgrade: the upstream connection already exists and has switched protocols.
    init(client: ClientConnection, upgradedUpstream: UpstreamConnection, authority: Authority, record: AccessRecord) {
        self.client = client
        self.authority = authority
        self.record = record
        self.upstream = upgradedUpstream
    }

    func start() {
        client.stream.delegate = self
        if upstream != nil {
            becomeEstablished()
            return
        }
        // Nothing is read from the client until the upstream answers.
        client.stream.disableRead()
        context.metrics.upstreamConnects.add()
        let key = UpstreamKey(host: authority.host, port: authority.port, tls: false)
        guard let connection = UpstreamConnection.make(key: key, context: context, delegate: self, timeout: context.config.limits.connectTimeout) else {
            fail(ProxyError(status: 502, type: "proxy_internal_error", details: "could not start a connection to \(authority)"))
            return
        }
        upstream = connection
        connection.connect(using: context.dnsBase)
    }

    private func becomeEstablished() {
        guard let upstream else { return }
        established = true
        context.metrics.tunnelsOpen.add(1)
        upstream.stream.delegate = self
        let idle = context.config.limits.tunnelIdleTimeout
        for stream in [client.stream, upstream.stream] {
            stream.setWatermarks(readHigh: context.bufferBudget, writeLow: context.bufferBudget / 4)
            stream.setTimeouts(read: idle, write: idle)
            stream.enableReadWrite()
        }
        // Bytes that arrived early (a TLS ClientHello right after CONNECT, a WebSocket frame
        // right after 101) are already buffered: move them now.
        relay(from: client.stream, to: upstream.stream)
        relay(from: upstream.stream, to: client.stream)
    }

    private func relay(from source: Stream, to destination: Stream) {
        guard source.isOpen, destination.isOpen else { return }
        let room = context.bufferBudget - destination.outputLength
        let count = min(source.inputLength, max(room, 0))
        guard count > 0 else { return }
        evbuffer_remove_buffer(source.input, destination.output, count)
        lastActivity = MonotonicClock.now()
        if source === client.stream {
            record.bytesIn += UInt64(count)
            context.metrics.bytesFromClients.add(count)
        } else {
            record.bytesOut += UInt64(count)
            context.metrics.bytesToClients.add(count)
        }
    }

    private func peer(of stream: Stream) -> Stream? {
        stream === client.stream ? upstream?.stream : client.stream
    }

    func streamReadable(_ stream: Stream) {
        guard established, let other = peer(of: stream) else { return }
        relay(from: stream, to: other)
    }

    func streamWritable(_ stream: Stream) {
        if closing {
            if stream.outputLength == 0 { finish() }
            return
        }
        guard established, let other = peer(of: stream) else { return }
        relay(from: other, to: stream)
    }

    func stream(_ stream: Stream, event: StreamEvent) {
        if !established {
            guard stream !== client.stream, let upstream else {
                close()
                return
            }
            if event.connected {
                SocketOptions.setNoDelay(upstream.stream.fd)
                record.status = 200
                client.stream.write("HTTP/1.1 200 Connection established\r\nVia: 1.1 countersign\r\n\r\n")
                context.metrics.countResponse(status: 200)
                becomeEstablished()
            } else {
                fail(upstream.connectFailure(event: event, savedErrno: cs_errno()))
            }
            return
        }
        if event.timeout {
            // A read timeout on one side is not idleness while the other side still moves bytes.
            let idle = context.config.limits.tunnelIdleTimeout
            if MonotonicClock.now() - lastActivity < idle {
                stream.enableRead()
                return
            }
            record.error = "tunnel_idle_timeout"
            close()
            return
        }
        // One side ended: deliver what it sent, then close both.
        if let other = peer(of: stream) {
            if stream.inputLength > 0 {
                evbuffer_add_buffer(other.output, stream.input)
            }
            closing = true
            stream.close()
            other.disableRead()
            if other.outputLength == 0 { finish() }
        } else {
            close()
        }
    }

    private func fail(_ error: ProxyError) {
        guard !done else { return }
        done = true
        upstream?.close()
        upstream = nil
        client.fail(with: error, record: &record, close: true)
    }

    private func finish() { close() }

    /// Ends the tunnel from the inside: both connections close and the line is logged.
    private func close() {
        guard !done else { return }
        release()
        client.tunnelFinished()
    }

    /// The client connection closed for its own reasons.
    func clientClosed() {
        guard !done else { return }
        release()
    }

    private func release() {
        done = true
        if established {
            established = false
            context.metrics.tunnelsOpen.add(-1)
        }
        upstream?.close()
        upstream = nil
        record.write(to: context.log)
    }
}
