import CLibevent
import CountersignAdmin
import CountersignHTTP

/// An intercepted client that chose HTTP/2 by ALPN: runs the sans-I/O `H2Connection` (server
/// role) over the client's TLS stream and gives each stream an `H2StreamBridge`, which carries
/// it as an HTTP/1.1 exchange. The connection ends on the client's GOAWAY or error, on
/// `idle_timeout` with no stream open, or after a drain's GOAWAY once its streams are done.
final class H2ClientSession: StreamDelegate {
    enum Life {
        case serving
        /// GOAWAY sent: closes once the streams it let in are done.
        case draining
        case closing
        case closed
    }

    let context: WorkerContext
    let stream: Stream
    let peer: PeerAddress
    let listener: ListenerRuntime
    let interception: InterceptedTunnel
    private var machine: H2Connection
    private(set) var bridges: [UInt32: H2StreamBridge] = [:]
    private(set) var life = Life.serving
    /// Told once the connection is over (the client connection that carried the handshake).
    private let ended: () -> Void
    private lazy var settingsTimer = Timer(base: context.base) { [unowned self] in self.perform(self.machine.settingsTimerExpired()) }
    /// `limits.header_timeout` for a header block left unfinished (what an HTTP/1.1 head gets),
    /// from its HEADERS frame: the idle timeout alone would let one byte a while hold it open.
    /// Made for the first unfinished block only: most connections never see one.
    private var headerBlockDeadline: Deadline?
    /// Bridge work that waits for the callbacks due now to run first (`later`): made for the
    /// first stream, one event for every stream of a read.
    private var deferred: [(id: UInt32, work: H2StreamBridge.Deferred)] = []
    private lazy var deferredTimer = Timer(base: context.base) { [unowned self] in self.runDeferred() }
    /// What the client's connection may hold unsent before response bodies stop being taken
    /// from the streams' exchanges: the windows a client advertises are its own to choose, and
    /// one that advertises large ones and does not read would have us hold every response whole.
    static let outputBudget = 256 * 1024
    /// Streams whose response octets wait for room on the connection (`outputBudget`).
    private var waitingForRoom: [UInt32] = []
    /// Frames leave once per loop iteration: the responses several streams' exchanges finished
    /// together share TLS records and one write.
    private lazy var output = IterationFlush(stream: stream, base: context.base)

    init(context: WorkerContext, stream: Stream, peer: PeerAddress, listener: ListenerRuntime, interception: InterceptedTunnel, ended: @escaping () -> Void) {
        self.context = context
        self.stream = stream
        self.peer = peer
        self.listener = listener
        self.interception = interception
        self.ended = ended
        let limits = context.config.limits
        machine = H2Connection(role: .server, limits: H2Limits(maxConcurrentStreams: limits.h2MaxConcurrentStreams,
                                                                 maxHeaderListSize: limits.maxHeaderBytes))
        Metrics.shared.h2ConnectionsOpen.add(1)
    }

    func start() {
        stream.delegate = self
        let limits = context.config.limits
        stream.setTimeouts(read: limits.idleTimeout, write: limits.idleTimeout)
        stream.setWatermarks(readHigh: 0, writeBudget: Self.outputBudget)
        perform(machine.start())
        settingsTimer.arm(seconds: limits.headerTimeout)
        stream.enableReadWrite()
        if stream.inputLength > 0 { streamReadable(stream) }
    }

    static var nowMillis: UInt64 { UInt64(MonotonicClock.now() * 1000) }

    // MARK: - The client's octets

    func streamReadable(_ stream: Stream) {
        guard life != .closed, let input = stream.input else { return }
        input.consumeSlices(while: { life != .closed && !machine.isClosed }, { machine.received($0, now: Self.nowMillis) }, then: perform)
        if !machine.awaitsSettingsAck { settingsTimer.cancel() }
        if machine.awaitsHeaderBlockEnd {
            if headerBlockDeadline == nil {
                headerBlockDeadline = Deadline(base: context.base) { [unowned self] in self.perform(self.machine.headerBlockTimerExpired()) }
            }
            headerBlockDeadline?.begin(seconds: context.config.limits.headerTimeout)
        } else {
            headerBlockDeadline?.end()
        }
    }

    /// The client took what waited: the streams that stopped for room go on.
    func streamWritable(_ stream: Stream) {
        guard !waitingForRoom.isEmpty else { return }
        let waiting = waitingForRoom
        waitingForRoom.removeAll(keepingCapacity: true)
        for id in waiting { bridges[id]?.windowOpened() }
    }

    func stream(_ stream: Stream, event: StreamEvent) {
        // A read timeout with streams open is not idleness: their answers are awaited.
        if event.timeout, event.reading, !bridges.isEmpty, !event.eof, !event.error {
            stream.enableRead()
            return
        }
        if event.timeout, bridges.isEmpty, life == .serving {
            perform(machine.goAway())
            return closeAfterFlush()
        }
        close()
    }

    // MARK: - Actions

    func perform(_ actions: [H2Action]) {
        for action in actions {
            switch action {
            case .write(let bytes):
                output.write(bytes)
            case .head(let id, let fields, let endStream):
                openBridge(id, fields: fields, endStream: endStream)
            case .data(let id, let data, let endStream):
                if let bridge = bridges[id] {
                    bridge.receivedData(data, endStream: endStream)
                } else {
                    // The stream's response is complete: what the client still sends is dropped.
                    perform(machine.consumed(stream: id, count: data.count))
                }
            case .trailers(let id, let fields):
                bridges[id]?.receivedTrailers(fields)
            case .streamReset(let id, _):
                detachBridge(id)?.abort()
            case .windowOpened(let id):
                if id == 0 {
                    for bridge in Array(bridges.values) { bridge.windowOpened() }
                } else {
                    bridges[id]?.windowOpened()
                }
            case .peerGoingAway:
                // The client opens nothing more; the streams it has go on.
                break
            case .close:
                closeAfterFlush()
            }
        }
        if life == .draining, bridges.isEmpty { closeAfterFlush() }
    }

    private func openBridge(_ id: UInt32, fields: [HPACKField], endStream: Bool) {
        guard let bridge = H2StreamBridge(session: self, id: id, fields: fields, endStream: endStream) else {
            perform(machine.resetStream(id, .internalError))
            return
        }
        bridges[id] = bridge
        Metrics.shared.h2StreamsOpen.add(1)
        bridge.start()
    }

    // MARK: - What bridges call

    func send(_ output: H1ToH2Translator.Output, on id: UInt32) -> Int {
        switch output {
        case .head(let fields, let endStream):
            sendHead(fields, endStream: endStream, on: id)
            return 0
        case .trailers(let fields):
            if case .success(let actions) = machine.sendTrailers(stream: id, fields: fields) { perform(actions) }
            return 0
        case .data(let bytes, let endStream):
            guard case .success(let (accepted, actions)) = machine.sendData(stream: id, bytes, endStream: endStream) else { return 0 }
            perform(actions)
            return accepted
        }
    }

    /// A head read in place (an exchange's parsed response) or a translated one.
    func sendHead(_ fields: some HPACKHeaderList, endStream: Bool, on id: UInt32) {
        if case .success(let actions) = machine.sendHead(stream: id, fields: fields, endStream: endStream) { perform(actions) }
    }

    /// Sends as much of the first `count` octets of `source` as the windows allow, as DATA
    /// moved from it; returns how many went (taken from `source`).
    func sendBody(from source: EventBuffer, count: Int, endStream: Bool, on id: UInt32) -> Int {
        guard case .success(let frames) = machine.sendData(stream: id, held: count, endStream: endStream) else { return 0 }
        for frame in frames {
            H2FrameWriter.withDataFrameHeader(length: frame.length, stream: id, endStream: frame.endStream) {
                output.write(header: $0, payload: frame.length, from: source)
            }
        }
        return frames.count
    }

    /// Body octets stream `id` may send now: its windows, and the room on the connection (a
    /// stream with none to wait for is told when the client has taken what waited).
    func sendAllowance(_ id: UInt32) -> Int {
        let room = stream.writeRoom
        if room == 0, !waitingForRoom.contains(id) { waitingForRoom.append(id) }
        return min(machine.sendWindow(stream: id), room)
    }

    func consumed(_ id: UInt32, count: Int) { perform(machine.consumed(stream: id, count: count)) }

    /// Does `work` for the stream's bridge once the callbacks due now have run (a bridge gone
    /// by then is skipped).
    func later(_ work: H2StreamBridge.Deferred, for id: UInt32) {
        deferred.append((id, work))
        deferredTimer.fireSoon()
    }

    private func runDeferred() {
        let due = deferred
        deferred.removeAll(keepingCapacity: true)
        for (id, work) in due { bridges[id]?.run(work) }
    }

    /// The bridge ended (its response sent in full, or given up with `code`).
    func bridgeEnded(_ id: UInt32, resetWith code: H2ErrorCode?) {
        guard detachBridge(id) != nil else { return }
        // A complete response before the whole request: the rest is not wanted (§8.1, NO_ERROR).
        let code = code ?? (machine.streamState(id) == .closed ? nil : .noError)
        perform(code.map { machine.resetStream(id, $0) } ?? [])
    }

    // MARK: - Ending

    /// Drain (SIGTERM): GOAWAY now, close once the streams in flight are done.
    func drain() {
        guard life == .serving else { return }
        life = .draining
        perform(machine.goAway())
    }

    private func closeAfterFlush() {
        guard life == .serving || life == .draining else { return }
        life = .closing
        abortBridges()
        stream.closeWhenFlushed(limit: 5) { [weak self] in self?.close() }
    }

    func close() {
        guard life != .closed else { return }
        life = .closed
        settingsTimer.cancel()
        if !deferred.isEmpty { deferredTimer.cancel() }
        output.cancel()
        headerBlockDeadline?.end()
        _ = machine.closed()
        abortBridges()
        stream.close()
        Metrics.shared.h2ConnectionsOpen.add(-1)
        ended()
    }

    private func abortBridges() {
        for id in Array(bridges.keys) { detachBridge(id)?.abort() }
    }

    /// The one way a bridge leaves the session (so the stream gauge stays true).
    private func detachBridge(_ id: UInt32) -> H2StreamBridge? {
        guard let bridge = bridges.removeValue(forKey: id) else { return nil }
        Metrics.shared.h2StreamsOpen.add(-1)
        // Idleness is time with no stream open: it starts now, not at the client's last
        // octet (which may be as old as the stream that just ended).
        if bridges.isEmpty, life == .serving { stream.restartReadTimeout() }
        return bridge
    }
}
