/// What the driver of an `H2Connection` does after an event.
public enum H2Action: Equatable, Sendable {
    /// Octets to write to the peer, in order.
    case write([UInt8])
    /// The peer's head on a stream: a request (server role) or a response, interim ones included
    /// (client role). Pseudo-header fields first, validated per RFC 9113 §8.
    case head(stream: UInt32, fields: [HPACKField], endStream: Bool)
    /// Body octets; the driver calls `consumed` once it has passed them on, which reopens the window.
    case data(stream: UInt32, [UInt8], endStream: Bool)
    case trailers(stream: UInt32, fields: [HPACKField])
    /// The stream ended without completing: reset by the peer, or by us for `code`.
    case streamReset(stream: UInt32, H2ErrorCode)
    /// The peer opened its window: data held back on this stream may be offered again
    /// (stream 0: on every stream).
    case windowOpened(stream: UInt32)
    /// The peer will process no stream above `lastStream` (client role: those are reset as
    /// REFUSED_STREAM and may be retried elsewhere).
    case peerGoingAway(lastStream: UInt32, H2ErrorCode)
    /// The connection is over: write what came before, then close.
    case close(H2ErrorCode, reason: String)
}
