import CLibevent
import CountersignConfig
import CountersignHTTP

/// An upstream that chose `h2` by ALPN, presented to its `UpstreamConnection`'s users as an
/// HTTP/1.1 connection: they write and read a bufferevent pair's near end as they would the
/// socket, and this session (the far end's delegate) carries each request as one stream of
/// the client-role `H2Connection` over the TLS stream, one at a time (the exchange does not
/// pipeline), translating both ways (`H1ToH2Translator` for requests, `H2ToH1Translation` for
/// responses, trailers included). The connection stays bound to its `UpstreamConnection`, so
/// pooling and connection-bound credentials keep their meaning.
///
/// Flow control: request octets are taken from the pair only within the stream's send window;
/// response DATA is credited back once it has left this end of the pair.
final class H2UpstreamSession: StreamDelegate {
    private let tls: Stream
    private let far: Stream
    private var machine: H2Connection
    private var requests: H1ToH2Translator
    /// The request being carried: its stream, its method (a HEAD response has no body), and how
    /// the response's body is being written back.
    private var current: (stream: UInt32?, method: String, body: H2ToH1Translation.BodyEncoding?)?
    private var uncredited = 0
    private(set) var isClosed = false
    private lazy var settingsTimer: Timer? = tls.bev.map { bev in
        Timer(base: bufferevent_get_base(bev)) { [unowned self] in self.perform(self.machine.settingsTimerExpired()) }
    }

    /// Takes `tls` (handshake done, `h2` negotiated) over and returns the near end of the pair
    /// its user reads and writes; nil when libevent could not make the pair.
    static func adopt(_ tls: Stream, limits: Limits, base: OpaquePointer) -> (H2UpstreamSession, Stream)? {
        guard let (near, far) = Stream.pair(base: base) else { return nil }
        let session = H2UpstreamSession(tls: tls, far: far, limits: limits)
        session.start(headerTimeout: limits.headerTimeout)
        return (session, near)
    }

    private init(tls: Stream, far: Stream, limits: Limits) {
        self.tls = tls
        self.far = far
        machine = H2Connection(role: .client, limits: H2Limits(maxConcurrentStreams: 1, maxHeaderListSize: limits.maxHeaderBytes))
        requests = H1ToH2Translator(.request(scheme: "https"), maxHeadBytes: limits.maxHeaderBytes)
    }

    private func start(headerTimeout: Double) {
        tls.delegate = self
        far.delegate = self
        // The request bytes wait in the pair until the stream's window takes them.
        far.setWatermarks(readHigh: 64 * 1024, writeBudget: 0)
        tls.setTimeouts(read: nil, write: nil)
        perform(machine.start())
        settingsTimer?.arm(seconds: headerTimeout)
        far.enableReadWrite()
        tls.enableReadWrite()
        if tls.inputLength > 0 { streamReadable(tls) }
    }

    // MARK: - Events

    func streamReadable(_ stream: Stream) {
        if stream === tls { return readUpstream() }
        pumpRequest()
    }

    func streamWritable(_ stream: Stream) {
        guard stream === far, uncredited > 0, far.outputLength == 0, let id = current?.stream else { return }
        let count = uncredited
        uncredited = 0
        perform(machine.consumed(stream: id, count: count))
    }

    func stream(_ stream: Stream, event: StreamEvent) {
        // The upstream went (or its TLS failed): the exchange hears an end of file.
        close()
    }

    private func readUpstream() {
        guard let input = tls.input else { return }
        while input.count > 0, !isClosed {
            let count = min(input.count, 64 * 1024)
            guard let bytes = input.pullUp(count) else { return }
            let actions = machine.received(bytes, now: H2ClientSession.nowMillis)
            input.drain(count)
            perform(actions)
        }
        if !machine.awaitsSettingsAck { settingsTimer?.cancel() }
    }

    /// Moves the request the exchange wrote onto the stream, as far as its window allows.
    private func pumpRequest() {
        guard !isClosed, let input = far.input else { return }
        while input.count > 0 {
            let allowance = current?.stream.map { machine.sendWindow(stream: $0) } ?? 0
            guard let bytes = input.pullUp(input.count) else { return }
            let consumed: Int
            let outputs: [H1ToH2Translator.Output]
            do {
                (consumed, outputs) = try requests.translate(bytes, allowance: allowance)
            } catch {
                return close()
            }
            input.drain(consumed)
            for output in outputs { send(output) }
            if consumed == 0 { break }
        }
    }

    private func send(_ output: H1ToH2Translator.Output) {
        switch output {
        case .head(let fields, let endStream):
            let method = fields.first { $0.name == Array(":method".utf8) }?.valueText ?? "GET"
            switch machine.openStream(fields: fields, endStream: endStream) {
            case .success(let (id, actions)):
                current = (id, method, nil)
                perform(actions)
            case .failure:
                close()
            }
        case .data(let bytes, let endStream):
            guard let id = current?.stream else { return }
            if case .success(let (_, actions)) = machine.sendData(stream: id, bytes, endStream: endStream) { perform(actions) }
        case .trailers(let fields):
            guard let id = current?.stream else { return }
            if case .success(let actions) = machine.sendTrailers(stream: id, fields: fields) { perform(actions) }
        }
    }

    // MARK: - The connection machine's actions

    private func perform(_ actions: [H2Action]) {
        for action in actions {
            switch action {
            case .write(let bytes):
                tls.write(bytes)
            case .head(let id, let fields, let endStream):
                guard id == current?.stream, let method = current?.method else { continue }
                let (bytes, body) = H2ToH1Translation.responseHead(fields, endStream: endStream, requestMethod: method)
                far.write(bytes)
                let interim = fields.first { $0.name == Array(":status".utf8) }.map { $0.value.first == UInt8(ascii: "1") } ?? false
                if !interim { current?.body = body }
                if endStream { responseEnded() }
            case .data(let id, let bytes, let endStream):
                guard id == current?.stream, let body = current?.body else { continue }
                var out = H2ToH1Translation.data(bytes, as: body)
                if endStream { out += H2ToH1Translation.end(trailers: [], as: body) }
                uncredited += bytes.count
                far.write(out)
                if endStream { responseEnded() }
            case .trailers(let id, let fields):
                guard id == current?.stream, let body = current?.body else { continue }
                far.write(H2ToH1Translation.end(trailers: fields, as: body))
                responseEnded()
            case .streamReset(let id, _):
                // A response cut short cannot be told in HTTP/1.1 but by closing.
                if id == current?.stream { close() }
            case .windowOpened:
                pumpRequest()
            case .peerGoingAway, .close:
                // Its stream (if any) goes on; no new request may start here, so the pool must drop it.
                if current == nil || action.isClose { close() } else { goingAway = true }
            }
        }
    }

    /// The upstream said GOAWAY: the connection ends with the stream in flight.
    private var goingAway = false

    private func responseEnded() {
        current = nil
        requests.nextMessage()
        if goingAway { return close() }
        pumpRequest()
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        settingsTimer?.cancel()
        _ = machine.closed()
        // The exchange (or the pool) hears an end of file on its end of the pair.
        _ = far.bev.map { bufferevent_flush($0, Int16(EV_WRITE), BEV_FINISHED) }
        far.close()
        tls.close()
    }
}

private extension H2Action {
    var isClose: Bool {
        if case .close = self { return true }
        return false
    }
}
