/// RFC 9113 §5.1: where a stream is in its life. Only streams that are not closed are kept;
/// `H2ClosedStreams` remembers how recent ones closed.
public enum H2StreamState: Equatable, Sendable {
    case idle
    case reservedLocal
    case reservedRemote
    case open
    /// We sent END_STREAM; the peer may still send.
    case halfClosedLocal
    /// The peer sent END_STREAM; we may still send.
    case halfClosedRemote
    case closed
}

/// Where the peer's message on a stream is: its head, then its body, then trailers (§8.1).
enum H2InboundPhase: Equatable, Sendable {
    /// No head yet (client role: also after an interim 1xx head).
    case awaitingHead
    /// The final head came; DATA may follow, `remaining` counting down a content-length.
    case body(remaining: Int?)
    case ended
}

/// One stream that is not closed.
struct H2Stream: Equatable, Sendable {
    var state: H2StreamState
    /// Octets we may still send (negative after the peer shrinks SETTINGS_INITIAL_WINDOW_SIZE).
    var sendWindow: Int
    /// Octets the peer may still send before we open more.
    var receiveWindow: Int
    /// Octets the application consumed since our last WINDOW_UPDATE for this stream.
    var consumedUnannounced = 0
    var inbound: H2InboundPhase = .awaitingHead
    /// Client role: our request was HEAD, so a content-length in the response announces no body.
    var requestWasHead = false

    /// The peer may still send HEADERS or DATA.
    var peerMaySend: Bool { state == .open || state == .halfClosedLocal }
    /// We may still send HEADERS or DATA.
    var weMaySend: Bool { state == .open || state == .halfClosedRemote }
}

/// How a stream closed, which decides what a late frame on it means (§5.1).
enum H2ClosedReason: Equatable, Sendable {
    /// We sent RST_STREAM: frames already in flight are ignored.
    case resetByUs
    /// The peer sent RST_STREAM: more frames are a stream error STREAM_CLOSED.
    case resetByPeer
    /// Both sides ended: more frames are a connection error STREAM_CLOSED.
    case finished
}

/// The last `capacity` closed streams and how they closed.
struct H2ClosedStreams: Sendable {
    private var reasons: [UInt32: H2ClosedReason] = [:]
    private var order: [UInt32] = []
    private var next = 0
    let capacity: Int

    init(capacity: Int = 256) {
        self.capacity = capacity
    }

    mutating func record(_ stream: UInt32, _ reason: H2ClosedReason) {
        if order.count < capacity {
            order.append(stream)
        } else {
            reasons[order[next]] = nil
            order[next] = stream
            next = (next + 1) % capacity
        }
        reasons[stream] = reason
    }

    /// nil for a stream never opened (skipped over) or closed too long ago to remember.
    func reason(_ stream: UInt32) -> H2ClosedReason? { reasons[stream] }
}
