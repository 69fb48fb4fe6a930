/// One HTTP/2 connection as a value with no I/O (RFC 9113), in either role: the driver feeds it
/// the peer's octets (`received`) and the application's sends, and carries out the `H2Action`s
/// each call returns: octets to write, heads, body and trailers per stream, resets, closing.
///
/// Bounded by construction: a peer's body is held only within the windows we advertise
/// (`H2Limits`), one header block at a time within its limits, and floods of resets, SETTINGS
/// or PINGs end the connection with ENHANCE_YOUR_CALM after a fixed amount of work.
public struct H2Connection: Sendable {
    /// The connection's own life.
    enum State: Equatable, Sendable {
        /// Our preface is out; the peer's SETTINGS must be its first frame (§3.4).
        case awaitingPeerSettings
        case open
        /// We sent GOAWAY NO_ERROR: streams above `lastStream` are no longer accepted.
        case draining(lastStream: UInt32)
        /// A connection error was sent, or the driver closed: nothing more is read.
        case closed
    }

    /// A header block being assembled from HEADERS and CONTINUATION frames.
    struct PendingBlock: Equatable, Sendable {
        var stream: UInt32
        var fragment: [UInt8]
        var endStream: Bool
        var continuations: Int
        /// Its priority names the stream itself (§5.3.1): a stream error once the block is decoded.
        var dependsOnItself = false
    }

    public let role: H2Role
    public let limits: H2Limits
    var state: State = .awaitingPeerSettings
    var reader: H2FrameReader
    var decoder: HPACKDecoder
    var encoder = HPACKEncoder()
    var peer = H2PeerSettings()
    var streams: [UInt32: H2Stream] = [:]
    var closedStreams = H2ClosedStreams()
    var pendingBlock: PendingBlock?
    /// Highest stream the peer opened, and the next we would open (client role).
    var lastPeerStream: UInt32 = 0
    var nextLocalStream: UInt32
    /// Connection-level windows (§6.9.1).
    var connectionSendWindow = 65535
    var connectionReceiveWindow = 65535
    var connectionConsumedUnannounced = 0
    /// Our SETTINGS frames not yet acknowledged (§6.5.3).
    var settingsAwaitingAck = 0
    /// The peer sent GOAWAY: no new streams of ours.
    var peerLastStream: UInt32?
    var resets: H2RateWindow
    var controlFrames: H2RateWindow
    /// The time of the call being handled, for failures found deep in it.
    var clock: UInt64 = 0
    var output: [UInt8] = []
    var actions: [H2Action] = []

    public init(role: H2Role, limits: H2Limits) {
        self.role = role
        self.limits = limits
        reader = H2FrameReader(expectingPreface: role == .server)
        decoder = HPACKDecoder(maxTableSize: 4096, maxHeaderListSize: limits.maxHeaderListSize)
        nextLocalStream = role == .client ? 1 : 2
        // Enough to recognise frames in flight on streams closed while all others turned over.
        closedStreams = H2ClosedStreams(capacity: max(256, 4 * limits.maxConcurrentStreams))
        resets = H2RateWindow(limit: limits.maxResetsPerWindow, windowMillis: limits.rateWindowMillis)
        controlFrames = H2RateWindow(limit: limits.maxControlFramesPerWindow, windowMillis: limits.rateWindowMillis)
    }

    /// Our side of the preface (§3.4): the client's magic octets in the client role, then our
    /// SETTINGS and the connection window raised to `limits.connectionWindow`.
    public mutating func start() -> [H2Action] {
        if role == .client { output += H2FrameReader.clientPreface }
        var settings = [H2Setting(H2Setting.initialWindowSize, UInt32(limits.streamWindow)),
                        H2Setting(H2Setting.maxHeaderListSize, UInt32(limits.maxHeaderListSize))]
        switch role {
        case .server: settings.insert(H2Setting(H2Setting.maxConcurrentStreams, UInt32(limits.maxConcurrentStreams)), at: 0)
        case .client: settings.insert(H2Setting(H2Setting.enablePush, 0), at: 0)
        }
        write(.settings(ack: false, settings))
        settingsAwaitingAck += 1
        if limits.connectionWindow > 65535 {
            write(.windowUpdate(stream: 0, increment: UInt32(limits.connectionWindow - 65535)))
            connectionReceiveWindow = limits.connectionWindow
        }
        return flush()
    }

    public var isClosed: Bool { state == .closed }
    /// Client role: whether new streams may still be opened here (no GOAWAY either way).
    public var acceptsNewStreams: Bool {
        switch state {
        case .closed, .draining: return false
        case .awaitingPeerSettings, .open: return peerLastStream == nil && nextLocalStream <= Self.maxStreamID
        }
    }
    /// The peer's SETTINGS_MAX_CONCURRENT_STREAMS (unbounded until it says).
    public var peerMaxConcurrentStreams: Int { peer.maxConcurrentStreams }
    public var activeStreamCount: Int { streams.count }
    public func streamState(_ id: UInt32) -> H2StreamState {
        if let stream = streams[id] { return stream.state }
        return isIdle(id) && state != .closed ? .idle : .closed
    }

    /// The peer's octets, as they arrive; `now` in milliseconds drives the flood windows.
    public mutating func received(_ bytes: some Sequence<UInt8>, now: UInt64) -> [H2Action] {
        guard state != .closed else { return [] }
        clock = now
        reader.append(bytes)
        while state != .closed {
            do {
                guard let frame = try reader.next() else { break }
                try handle(frame, now: now)
            } catch {
                fail(error)
            }
        }
        return flush()
    }

    /// Whether our SETTINGS still wait for the peer's ACK: the driver arms a timer while true.
    public var awaitsSettingsAck: Bool { settingsAwaitingAck > 0 && state != .closed }

    /// The driver's timer for our SETTINGS ran out (§6.5.3): without the ACK, SETTINGS_TIMEOUT.
    public mutating func settingsTimerExpired() -> [H2Action] {
        guard awaitsSettingsAck else { return [] }
        fail(.connection(.settingsTimeout, reason: "SETTINGS not acknowledged in time"))
        return flush()
    }

    /// Whether a header block has begun and not ended (HEADERS without END_HEADERS, its
    /// CONTINUATION awaited): nothing else may arrive meanwhile (§6.10), so the driver bounds
    /// it with a deadline while true, as it bounds an HTTP/1.1 head.
    public var awaitsHeaderBlockEnd: Bool { pendingBlock != nil && state != .closed }

    /// The driver's deadline for a header block ran out. The block holds the whole connection
    /// (§6.10) and keeping it open for a peer that does not finish it is the slow-head attack,
    /// "activity that is suspicious" (§10.5): ENHANCE_YOUR_CALM. Its stream never had its head,
    /// so the GOAWAY's last stream is below it: the peer may retry it elsewhere (§6.8).
    public mutating func headerBlockTimerExpired() -> [H2Action] {
        guard awaitsHeaderBlockEnd else { return [] }
        fail(.connection(.enhanceYourCalm, reason: "header block not finished in time"))
        return flush()
    }

    /// The driver lost the connection or gave up on it: every open stream is reset for it.
    public mutating func closed() -> [H2Action] {
        guard state != .closed else { return [] }
        state = .closed
        for id in streams.keys.sorted() { actions.append(.streamReset(stream: id, .cancel)) }
        streams.removeAll()
        output.removeAll()
        return flush()
    }

    // MARK: - Dispatch

    mutating func handle(_ frame: H2Frame, now: UInt64) throws(H2Failure) {
        if let pending = pendingBlock {
            // §6.10: nothing but CONTINUATION on the same stream until the block ends.
            guard case .continuation(let stream, let fragment, let endHeaders) = frame, stream == pending.stream else {
                throw .connection(.protocolError, reason: "a frame other than CONTINUATION inside a header block")
            }
            try continueBlock(fragment, endHeaders: endHeaders, now: now)
            return
        }
        if state == .awaitingPeerSettings {
            guard case .settings(ack: false, _) = frame else { throw .connection(.protocolError, reason: "the peer's first frame is not SETTINGS") }
            state = .open
        }
        switch frame {
        case .data(let stream, let data, let endStream, _):
            try receiveData(stream, data, endStream: endStream, flowLength: frame.flowControlledLength, now: now)
        case .headers(let stream, let fragment, let endStream, let endHeaders, let priority, _):
            try startBlock(stream, fragment, endStream: endStream, endHeaders: endHeaders, dependsOnItself: priority?.dependency == stream, now: now)
        case .priority(let stream, let priority):
            // §5.3.2: ignored, except a stream that depends on itself.
            if priority.dependency == stream { try streamError(stream, .protocolError, "a stream depends on itself", now: now) }
        case .rstStream(let stream, let code):
            try receiveReset(stream, code, now: now)
        case .settings(let ack, let settings):
            try receiveSettings(ack: ack, settings, now: now)
        case .pushPromise:
            // §8.4: a server never receives one; we disable push as a client (§6.5.2).
            throw .connection(.protocolError, reason: "PUSH_PROMISE received")
        case .ping(let ack, let opaque):
            guard !ack else { return }
            try countControlFrame(now: now)
            write(.ping(ack: true, opaque: opaque))
        case .goaway(let lastStream, let code, _):
            receiveGoaway(lastStream, code)
        case .windowUpdate(let stream, let increment):
            try receiveWindowUpdate(stream, increment, now: now)
        case .continuation:
            throw .connection(.protocolError, reason: "CONTINUATION without a header block")
        case .unknown:
            break
        }
    }

    // MARK: - Control frames

    mutating func receiveSettings(ack: Bool, _ settings: [H2Setting], now: UInt64) throws(H2Failure) {
        guard !ack else {
            settingsAwaitingAck = max(0, settingsAwaitingAck - 1)
            return
        }
        try countControlFrame(now: now)
        let oldWindow = peer.initialWindowSize
        for setting in settings { try peer.apply(setting, role: role) }
        encoder.setMaxTableSize(peer.headerTableSize)
        let delta = peer.initialWindowSize - oldWindow
        if delta != 0 {
            // §6.9.2: every stream's send window moves by the difference, and may go negative.
            for id in streams.keys {
                streams[id]!.sendWindow += delta
                guard streams[id]!.sendWindow <= H2PeerSettings.maxWindow else {
                    throw .connection(.flowControlError, reason: "SETTINGS_INITIAL_WINDOW_SIZE overflows a stream window")
                }
            }
        }
        write(.settings(ack: true, []))
        if delta > 0 { actions.append(.windowOpened(stream: 0)) }
    }

    mutating func countControlFrame(now: UInt64) throws(H2Failure) {
        guard controlFrames.allow(at: now) else { throw .connection(.enhanceYourCalm, reason: "SETTINGS/PING flood") }
    }

    mutating func receiveGoaway(_ lastStream: UInt32, _ code: H2ErrorCode) {
        peerLastStream = min(peerLastStream ?? lastStream, lastStream)
        actions.append(.peerGoingAway(lastStream: lastStream, code))
        guard role == .client else { return }
        // §6.8: our streams above lastStream were not processed; they may be retried elsewhere.
        for id in streams.keys.sorted() where id > lastStream {
            streams[id] = nil
            closedStreams.record(id, .resetByPeer)
            actions.append(.streamReset(stream: id, .refusedStream))
        }
    }

    mutating func receiveWindowUpdate(_ id: UInt32, _ increment: UInt32, now: UInt64) throws(H2Failure) {
        if id == 0 {
            guard increment > 0 else { throw .connection(.protocolError, reason: "WINDOW_UPDATE of 0 on the connection") }
            connectionSendWindow += Int(increment)
            guard connectionSendWindow <= H2PeerSettings.maxWindow else { throw .connection(.flowControlError, reason: "connection window above 2^31-1") }
            actions.append(.windowOpened(stream: 0))
            return
        }
        guard !isIdle(id) else { throw .connection(.protocolError, reason: "WINDOW_UPDATE on an idle stream") }
        guard streams[id] != nil else { return } // closed: may have crossed our RST_STREAM or END_STREAM
        guard increment > 0 else { try streamError(id, .protocolError, "WINDOW_UPDATE of 0", now: now); return }
        streams[id]!.sendWindow += Int(increment)
        guard streams[id]!.sendWindow <= H2PeerSettings.maxWindow else {
            try streamError(id, .flowControlError, "stream window above 2^31-1", now: now)
            return
        }
        actions.append(.windowOpened(stream: id))
    }

    mutating func receiveReset(_ id: UInt32, _ code: H2ErrorCode, now: UInt64) throws(H2Failure) {
        guard !isIdle(id) else { throw .connection(.protocolError, reason: "RST_STREAM on an idle stream") }
        guard streams[id] != nil else { return }
        streams[id] = nil
        closedStreams.record(id, .resetByPeer)
        actions.append(.streamReset(stream: id, code))
        // CVE-2023-44487: each reset costs us a stream's set-up; past the budget, the connection goes.
        guard resets.allow(at: now) else { throw .connection(.enhanceYourCalm, reason: "too many streams reset (rapid reset)") }
    }

    // MARK: - Errors and helpers

    /// A stream error (§5.4.2): RST_STREAM to the peer, the stream reset for the driver.
    mutating func streamError(_ id: UInt32, _ code: H2ErrorCode, _ reason: String, now: UInt64) throws(H2Failure) {
        write(.rstStream(stream: id, code))
        if streams.removeValue(forKey: id) != nil { actions.append(.streamReset(stream: id, code)) }
        closedStreams.record(id, .resetByUs)
        // Making us reset streams is a rapid reset too.
        guard resets.allow(at: now) else { throw .connection(.enhanceYourCalm, reason: "too many streams reset (rapid reset)") }
    }

    /// A connection error (§5.4.1): GOAWAY with the last stream we processed, then close.
    mutating func fail(_ failure: H2Failure) {
        switch failure {
        case .stream(let id, let code, let reason):
            do { try streamError(id, code, reason, now: clock) } catch { fail(error) }
        case .connection(let code, let reason):
            write(.goaway(lastStream: lastPeerStream, code, debug: Array(reason.utf8)))
            for id in streams.keys.sorted() { actions.append(.streamReset(stream: id, code)) }
            streams.removeAll()
            pendingBlock = nil
            state = .closed
            actions.append(.close(code, reason: reason))
        }
    }

    /// Whether `id` names a stream never opened (§5.1.1: identifiers only grow).
    func isIdle(_ id: UInt32) -> Bool {
        let peerInitiated = (id % 2 == 1) == (role == .server)
        return peerInitiated ? id > lastPeerStream : id >= nextLocalStream
    }

    mutating func write(_ frame: H2Frame) {
        H2FrameWriter.write(frame, into: &output)
    }

    mutating func flush() -> [H2Action] {
        var result: [H2Action] = []
        if !output.isEmpty { result.append(.write(output)) }
        result += actions
        // A close comes after the write that carries its GOAWAY.
        output = []
        actions = []
        return result
    }
}
