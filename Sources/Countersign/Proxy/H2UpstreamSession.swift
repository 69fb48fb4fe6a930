import CountersignConfig
import CountersignHTTP
import CountersignTrust

/// An upstream that chose `h2` by ALPN, presented to exchanges and the pool as HTTP/1.1
/// connections: each `Lane` is a bufferevent pair whose near end is the `stream` of one
/// `UpstreamConnection`, read and written as HTTP/1.1, and whose far end this session carries
/// as one stream at a time of the client-role `H2Connection` (the exchange does not pipeline).
/// Several lanes share the connection: concurrent exchanges to the same upstream multiplex
/// over it (`H2UpstreamSessions` hands out new lanes). Translation both ways, trailers included.
///
/// Flow control: request octets are taken from a lane only within its stream's send window;
/// response DATA is credited back once it has left the lane's far end. The session owns the
/// socket (and its descriptor) and closes once its last lane has.
final class H2UpstreamSession: StreamDelegate {
    /// One HTTP/1.1 connection's worth of the session.
    final class Lane {
        let far: Stream
        var requests: H1ToH2Translator
        /// The request being carried: its stream once opened, its method (a HEAD response has
        /// no body), and how the response body is written back once its head came.
        var current: (stream: UInt32?, method: String, body: H2ToH1Translation.BodyEncoding?)?
        /// Response octets written to the pair and not yet credited to the upstream's window.
        var uncredited = 0

        init(far: Stream, maxHeadBytes: Int) {
            self.far = far
            requests = H1ToH2Translator(.request(scheme: "https"), maxHeadBytes: maxHeadBytes)
        }
    }

    /// More lanes than this never share one connection, whatever the upstream allows.
    static let maxLanes = 100

    let key: UpstreamKey
    /// The certificate the upstream served on this connection, for every lane's channel binding and checks.
    var servedLeaf: Certificate?
    private let tls: Stream
    private let base: OpaquePointer
    private let maxHeadBytes: Int
    private var machine: H2Connection
    private var lanes: [ObjectIdentifier: Lane] = [:]
    private var laneOfStream: [UInt32: Lane] = [:]
    private(set) var isClosed = false
    /// Told once, when the session closes (the registry forgets it, the descriptor is released).
    private let ended: (H2UpstreamSession) -> Void
    private lazy var settingsTimer = Timer(base: base) { [unowned self] in self.perform(self.machine.settingsTimerExpired()) }
    /// Frames leave once per loop iteration: the requests of lanes started together share a write.
    private lazy var output = IterationFlush(stream: tls, base: base)

    /// Takes `tls` (handshake done, `h2` negotiated) over; returns the session and the near end
    /// of its first lane.
    static func adopt(_ tls: Stream, key: UpstreamKey, limits: Limits, base: OpaquePointer,
                      ended: @escaping (H2UpstreamSession) -> Void) -> (H2UpstreamSession, Lane, Stream)? {
        let session = H2UpstreamSession(tls: tls, key: key, limits: limits, base: base, ended: ended)
        guard let (lane, near) = session.makeLane() else { return nil }
        session.start(headerTimeout: limits.headerTimeout)
        return (session, lane, near)
    }

    private init(tls: Stream, key: UpstreamKey, limits: Limits, base: OpaquePointer, ended: @escaping (H2UpstreamSession) -> Void) {
        self.tls = tls
        self.key = key
        self.base = base
        self.ended = ended
        maxHeadBytes = limits.maxHeaderBytes
        machine = H2Connection(role: .client, limits: H2Limits(maxConcurrentStreams: 1, maxHeaderListSize: limits.maxHeaderBytes))
    }

    private func start(headerTimeout: Double) {
        tls.delegate = self
        tls.setTimeouts(read: nil, write: nil)
        perform(machine.start())
        settingsTimer.arm(seconds: headerTimeout)
        tls.enableReadWrite()
        if tls.inputLength > 0 { readUpstream() }
    }

    /// Whether another exchange may share this connection now.
    var hasRoom: Bool {
        !isClosed && machine.acceptsNewStreams && lanes.count < min(Self.maxLanes, machine.peerMaxConcurrentStreams)
    }

    /// A new lane: the near end is the new connection's stream; nil when libevent could not.
    func makeLane() -> (Lane, Stream)? {
        guard let (near, far) = Stream.pair(base: base) else { return nil }
        let lane = Lane(far: far, maxHeadBytes: maxHeadBytes)
        lanes[ObjectIdentifier(far)] = lane
        far.delegate = self
        // The request bytes wait in the pair until the stream's window takes them.
        far.setWatermarks(readHigh: 64 * 1024, writeBudget: 0)
        far.enableReadWrite()
        return (lane, near)
    }

    // MARK: - Events

    func streamReadable(_ stream: Stream) {
        if stream === tls { return readUpstream() }
        if let lane = lanes[ObjectIdentifier(stream)] { pumpRequest(lane) }
    }

    func streamWritable(_ stream: Stream) {
        guard let lane = lanes[ObjectIdentifier(stream)], lane.uncredited > 0, lane.far.outputLength == 0,
              let id = lane.current?.stream else { return }
        let count = lane.uncredited
        lane.uncredited = 0
        perform(machine.consumed(stream: id, count: count))
    }

    func stream(_ stream: Stream, event: StreamEvent) {
        // The upstream went (or its TLS failed): every lane's user hears an end of file.
        if stream === tls { close() }
    }

    private func readUpstream() {
        guard let input = tls.input else { return }
        input.consumeSlices(while: { !isClosed }, { machine.received($0, now: H2ClientSession.nowMillis) }, then: perform)
        if !machine.awaitsSettingsAck { settingsTimer.cancel() }
    }

    /// Moves the request a lane's user wrote onto its stream, as far as the window allows.
    private func pumpRequest(_ lane: Lane) {
        guard !isClosed, let input = lane.far.input else { return }
        while input.count > 0, lanes[ObjectIdentifier(lane.far)] != nil {
            let allowance = lane.current?.stream.map { machine.sendWindow(stream: $0) } ?? 0
            guard let bytes = input.pullUp(input.count) else { return }
            let consumed: Int
            let outputs: [H1ToH2Translator.Output]
            do {
                (consumed, outputs) = try lane.requests.translate(bytes, allowance: allowance)
            } catch {
                return closeLane(lane)
            }
            input.drain(consumed)
            for output in outputs { send(output, on: lane) }
            if consumed == 0 { break }
        }
    }

    private func send(_ output: H1ToH2Translator.Output, on lane: Lane) {
        switch output {
        case .head(let fields, let endStream):
            let method = fields.first { $0.name == Array(":method".utf8) }?.valueText ?? "GET"
            switch machine.openStream(fields: fields, endStream: endStream) {
            case .success(let (id, actions)):
                lane.current = (id, method, nil)
                laneOfStream[id] = lane
                perform(actions)
            case .failure:
                // GOAWAY or no stream left: the exchange sees the connection close and may retry.
                closeLane(lane)
            }
        case .data(let bytes, let endStream):
            guard let id = lane.current?.stream else { return }
            if case .success(let (_, actions)) = machine.sendData(stream: id, bytes, endStream: endStream) { perform(actions) }
        case .trailers(let fields):
            guard let id = lane.current?.stream else { return }
            if case .success(let actions) = machine.sendTrailers(stream: id, fields: fields) { perform(actions) }
        }
    }

    // MARK: - The connection machine's actions

    private func perform(_ actions: [H2Action]) {
        for action in actions {
            switch action {
            case .write(let bytes):
                output.write(bytes)
            case .head(let id, let fields, let endStream):
                guard let lane = laneOfStream[id], let method = lane.current?.method else { continue }
                let (bytes, body) = H2ToH1Translation.responseHead(fields, endStream: endStream, requestMethod: method)
                lane.far.write(bytes)
                let interim = fields.first { $0.name == Array(":status".utf8) }.map { $0.value.first == UInt8(ascii: "1") } ?? false
                if !interim { lane.current?.body = body }
                if endStream { responseEnded(lane, stream: id) }
            case .data(let id, let bytes, let endStream):
                guard let lane = laneOfStream[id], let body = lane.current?.body else { continue }
                var out = H2ToH1Translation.data(bytes, as: body)
                if endStream { out += H2ToH1Translation.end(trailers: [], as: body) }
                lane.uncredited += bytes.count
                lane.far.write(out)
                if endStream { responseEnded(lane, stream: id) }
            case .trailers(let id, let fields):
                guard let lane = laneOfStream[id], let body = lane.current?.body else { continue }
                lane.far.write(H2ToH1Translation.end(trailers: fields, as: body))
                responseEnded(lane, stream: id)
            case .streamReset(let id, _):
                // A response cut short cannot be told in HTTP/1.1 but by closing that lane.
                if let lane = laneOfStream.removeValue(forKey: id) { closeLane(lane) }
            case .windowOpened(let id):
                if id == 0 {
                    for lane in Array(lanes.values) { pumpRequest(lane) }
                } else if let lane = laneOfStream[id] {
                    pumpRequest(lane)
                }
            case .peerGoingAway:
                // The streams in flight go on; idle lanes can carry nothing more.
                for lane in Array(lanes.values) where lane.current == nil { closeLane(lane) }
            case .close:
                close()
            }
        }
    }

    private func responseEnded(_ lane: Lane, stream id: UInt32) {
        laneOfStream[id] = nil
        lane.current = nil
        lane.requests.nextMessage()
        if !machine.acceptsNewStreams { return closeLane(lane) }
        pumpRequest(lane)
    }

    // MARK: - Ending

    /// A lane is over (its connection closed, or its stream failed): its user hears an end of
    /// file; the session ends with its last lane.
    func closeLane(_ lane: Lane) {
        guard lanes.removeValue(forKey: ObjectIdentifier(lane.far)) != nil else { return }
        if let id = lane.current?.stream {
            laneOfStream[id] = nil
            perform(machine.resetStream(id, .cancel))
        }
        lane.far.finishWriting()
        lane.far.close()
        if lanes.isEmpty { close() }
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        settingsTimer.cancel()
        output.cancel()
        _ = machine.closed()
        for lane in Array(lanes.values) { closeLane(lane) }
        tls.close()
        ended(self)
    }
}
