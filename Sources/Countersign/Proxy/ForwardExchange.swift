import CEventSSL
import CountersignHTTP

/// One request forwarded upstream and its response brought back, bodies streamed in both
/// directions at once (an upstream may answer before the upload ends). The exchange is the
/// delegate of both streams while it runs, and hands the client back when done.
final class ForwardExchange: StreamDelegate, UpstreamConnectDelegate {
    private unowned let client: ClientConnection
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
    private var responsePump: BodyPump?
    private var responseDone = false
    private var clientKeepAlive = false
    private var upstreamBytesSeen = false
    private var retried = false
    private var finished = false
    private lazy var responseTimer = Timer(base: context.base) { [weak self] in self?.responseTimedOut() }

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
    }

    private var wantsUpgrade: Bool { HopByHop.requestsUpgrade(head.headers) }

    func start() {
        client.stream.delegate = self
        acquireUpstream()
    }

    // MARK: - Upstream connection

    private func acquireUpstream() {
        if let pooled = context.pool.take(key) {
            context.metrics.upstreamReuses.add()
            attach(pooled)
            sendHead()
            return
        }
        guard let connection = UpstreamConnection.open(host: target.host, port: target.port, tls: target.tls, context: context, delegate: self) else {
            failBeforeResponse(ProxyError(status: 502, type: "proxy_internal_error", details: "could not start a connection to \(key)"))
            return
        }
        if !finished { upstream = connection }
    }

    private func attach(_ connection: UpstreamConnection) {
        upstream = connection
        connection.stream.delegate = self
        let limits = context.config.limits
        connection.stream.setWatermarks(readHigh: context.bufferBudget, writeLow: context.bufferBudget / 4)
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
        upstream.stream.write(HeadSerializer.request(method: head.method, target: path, headers: headers))
        headSent = true
        if requestDone {
            armResponseTimer()
        } else {
            pumpRequest()
        }
    }

    // MARK: - Request body

    private func pumpRequest() {
        guard headSent, !requestDone, let upstream, upstream.stream.isOpen else { return }
        let before = requestPump.bytesMoved
        let progress = requestPump.pump(from: client.stream.input, to: upstream.stream.output, budget: context.bufferBudget)
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

    private func responseTimedOut() {
        guard responseHead == nil, !finished else { return }
        failBeforeResponse(ProxyError(status: 504, type: "http_response_timeout",
                                      details: "\(key) sent no response head within \(Seconds.text(context.config.limits.headerTimeout))"))
    }

    // MARK: - Response

    private func readResponseHead() {
        guard let upstream else { return }
        while responseHead == nil {
            let available = upstream.stream.inputLength
            guard available > 0 else { return }
            upstreamBytesSeen = true
            let maxHead = context.config.limits.maxHeaderBytes
            let window = min(available, maxHead + 64)
            guard let pointer = evbuffer_pullup(upstream.stream.input, window) else { return }
            switch HeadParser.parseResponse(UnsafeRawBufferPointer(start: pointer, count: window), maxHeadBytes: maxHead) {
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
                    forwardInterim(response)
                    continue
                }
                startResponse(response)
            }
        }
        pumpResponse()
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
        responsePump = BodyPump(framing, output: output)
    }

    private func pumpResponse() {
        guard responseHead != nil, var pump = responsePump, let upstream, !responseDone else { return }
        let before = pump.bytesMoved
        let progress = pump.pump(from: upstream.stream.input, to: client.stream.output, budget: context.bufferBudget)
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
            if reusable {
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
        } else if responseHead == nil {
            readResponseHead()
        } else {
            pumpResponse()
        }
    }

    func streamWritable(_ stream: Stream) {
        if stream === client.stream {
            pumpResponse()
        } else {
            pumpRequest()
        }
    }

    func stream(_ stream: Stream, event: StreamEvent) {
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
            _ = pump.pump(from: upstream.stream.input, to: client.stream.output, budget: Int.max)
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
