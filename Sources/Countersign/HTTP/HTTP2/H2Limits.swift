/// What one HTTP/2 connection allows its peer, fixed when it starts. Every bound on memory and
/// work comes from here: a peer can make us hold at most `connectionWindow` octets of body
/// (each stream at most `streamWindow`), one header block of `maxHeaderBlockOctets`, and
/// `maxConcurrentStreams` streams.
public struct H2Limits: Equatable, Sendable {
    /// `limits.h2_max_concurrent_streams`: streams the peer may have open at once.
    public var maxConcurrentStreams: Int
    /// SETTINGS_INITIAL_WINDOW_SIZE we advertise: body octets a stream may send unread.
    /// At least 65 535, so that what a peer may send before our SETTINGS arrive fits.
    public var streamWindow: Int
    /// The connection's receive window (raised from 65 535 by a WINDOW_UPDATE at the start).
    public var connectionWindow: Int
    /// SETTINGS_MAX_HEADER_LIST_SIZE we advertise, and the decoder's bound.
    public var maxHeaderListSize: Int
    /// Compressed octets one header block (HEADERS + CONTINUATION) may take.
    public var maxHeaderBlockOctets: Int
    /// CONTINUATION frames one header block may take (a flood of empty ones is stopped here).
    public var maxContinuationFrames: Int
    /// Rapid reset (CVE-2023-44487): streams the peer resets, or makes us refuse, per window.
    /// The default (1000 per 10 s) leaves room for clients that cancel a page's worth of streams
    /// at once; an attack resets tens of thousands a second.
    public var maxResetsPerWindow: Int
    /// SETTINGS and PING frames (each owing an ACK) per window.
    public var maxControlFramesPerWindow: Int
    /// The window for both counts, in milliseconds.
    public var rateWindowMillis: UInt64

    public init(maxConcurrentStreams: Int = 100, streamWindow: Int = 65535, connectionWindow: Int = 1 << 20,
                maxHeaderListSize: Int = 65536, maxHeaderBlockOctets: Int = 131_072, maxContinuationFrames: Int = 32,
                maxResetsPerWindow: Int = 1000, maxControlFramesPerWindow: Int = 200, rateWindowMillis: UInt64 = 10_000) {
        self.maxConcurrentStreams = maxConcurrentStreams
        self.streamWindow = max(streamWindow, 65535)
        self.connectionWindow = max(connectionWindow, 65535)
        self.maxHeaderListSize = maxHeaderListSize
        self.maxHeaderBlockOctets = maxHeaderBlockOctets
        self.maxContinuationFrames = maxContinuationFrames
        self.maxResetsPerWindow = maxResetsPerWindow
        self.maxControlFramesPerWindow = maxControlFramesPerWindow
        self.rateWindowMillis = rateWindowMillis
    }
}

/// The peer's SETTINGS as they stand (RFC 9113 §6.5.2 initial values until it says otherwise).
public struct H2PeerSettings: Equatable, Sendable {
    public var headerTableSize = 4096
    public var maxConcurrentStreams = Int.max
    public var initialWindowSize = 65535
    public var maxFrameSize = 16384
    public var maxHeaderListSize = Int.max

    static let maxWindow = Int(Int32.max)

    /// Applies one parameter, in the order received (§6.5.3); unknown identifiers are ignored.
    mutating func apply(_ setting: H2Setting, role: H2Role) throws(H2Failure) {
        let value = Int(setting.value)
        switch setting.identifier {
        case H2Setting.headerTableSize: headerTableSize = value
        case H2Setting.enablePush:
            guard value <= 1 else { throw .connection(.protocolError, reason: "SETTINGS_ENABLE_PUSH of \(value)") }
            // §6.5.2: only a client may enable push, and we never accept pushes anyway.
            guard role == .server || value == 0 else { throw .connection(.protocolError, reason: "a server sent SETTINGS_ENABLE_PUSH 1") }
        case H2Setting.maxConcurrentStreams: maxConcurrentStreams = value
        case H2Setting.initialWindowSize:
            guard value <= Self.maxWindow else { throw .connection(.flowControlError, reason: "SETTINGS_INITIAL_WINDOW_SIZE of \(value)") }
            initialWindowSize = value
        case H2Setting.maxFrameSize:
            guard value >= 16384, value <= 16_777_215 else { throw .connection(.protocolError, reason: "SETTINGS_MAX_FRAME_SIZE of \(value)") }
            maxFrameSize = value
        case H2Setting.maxHeaderListSize: maxHeaderListSize = value
        default: break
        }
    }
}

public enum H2Role: Equatable, Sendable {
    /// We face a client (an intercepted application): it opens the streams.
    case server
    /// We face a server (an h2 upstream): we open the streams.
    case client
}
