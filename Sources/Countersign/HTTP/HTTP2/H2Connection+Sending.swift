/// What the application sends: heads, body within the peer's windows, trailers, resets and
/// GOAWAY (RFC 9113 §5.1, §6.9, §6.8).
extension H2Connection {
    /// Why the application cannot send on a stream or open one.
    public enum SendRefusal: Error, Equatable, Sendable {
        /// The stream is not open for sending (never opened, ended, or reset).
        case streamNotWritable
        /// Client role: the peer's SETTINGS_MAX_CONCURRENT_STREAMS is reached; wait for a stream to end.
        case concurrencyLimit
        /// Client role: the peer sent GOAWAY, or stream identifiers are used up (§5.1.1): open
        /// a new connection.
        case connectionExhausted
        case connectionClosed
    }

    public static let maxStreamID: UInt32 = 0x7FFF_FFFF

    /// Client role: a new stream carrying a request head. Returns its identifier.
    public mutating func openStream(fields: [HPACKField], endStream: Bool) -> Result<(UInt32, [H2Action]), SendRefusal> {
        guard role == .client else { return .failure(.streamNotWritable) }
        switch state {
        case .closed: return .failure(.connectionClosed)
        case .draining: return .failure(.connectionExhausted)
        case .awaitingPeerSettings, .open: break
        }
        guard peerLastStream == nil, nextLocalStream <= Self.maxStreamID else { return .failure(.connectionExhausted) }
        guard streams.count < peer.maxConcurrentStreams else { return .failure(.concurrencyLimit) }
        let id = nextLocalStream
        nextLocalStream += 2
        var stream = H2Stream(state: endStream ? .halfClosedLocal : .open, sendWindow: peer.initialWindowSize, receiveWindow: limits.streamWindow)
        stream.requestWasHead = fields.contains { $0.name == Array(":method".utf8) && $0.value == Array("HEAD".utf8) }
        streams[id] = stream
        writeBlock(id, fields, endStream: endStream)
        return .success((id, flush()))
    }

    /// Server role: the response head (interim ones too); client role: not used (see `openStream`).
    public mutating func sendHead(stream id: UInt32, fields: some HPACKHeaderList, endStream: Bool) -> Result<[H2Action], SendRefusal> {
        guard state != .closed else { return .failure(.connectionClosed) }
        guard streams[id]?.weMaySend == true else { return .failure(.streamNotWritable) }
        writeBlock(id, fields, endStream: endStream)
        if endStream { weEnded(id) }
        return .success(flush())
    }

    /// Trailers end the stream.
    public mutating func sendTrailers(stream id: UInt32, fields: [HPACKField]) -> Result<[H2Action], SendRefusal> {
        sendHead(stream: id, fields: fields, endStream: true)
    }

    /// Sends as much of `data` as both windows allow, in frames within the peer's
    /// SETTINGS_MAX_FRAME_SIZE; `endStream` applies only when all of it went. The rest stays with
    /// the caller until `.windowOpened`: a stalled stream holds nothing here and blocks no other.
    public mutating func sendData(stream id: UInt32, _ data: [UInt8], endStream: Bool) -> Result<(accepted: Int, [H2Action]), SendRefusal> {
        switch sendData(stream: id, held: data.count, endStream: endStream) {
        case .failure(let refusal):
            return .failure(refusal)
        case .success(let frames):
            var offset = 0
            for frame in frames {
                H2FrameWriter.dataFrameHeader(length: frame.length, stream: id, endStream: frame.endStream, into: &output)
                output.append(contentsOf: data[offset..<(offset + frame.length)])
                offset += frame.length
            }
            return .success((frames.count, flush()))
        }
    }

    /// As `sendData`, for body octets the driver holds in its own buffers: the frames it writes
    /// for as many of `held` octets as both windows allow, each a header
    /// (`H2FrameWriter.withDataFrameHeader`) then that many octets, moved without a copy into
    /// an array. Nothing else comes of it (no frame of the machine's own, no event).
    public mutating func sendData(stream id: UInt32, held: Int, endStream: Bool) -> Result<H2DataFrames, SendRefusal> {
        guard state != .closed else { return .failure(.connectionClosed) }
        guard let stream = streams[id], stream.weMaySend else { return .failure(.streamNotWritable) }
        let accepted = min(max(0, min(stream.sendWindow, connectionSendWindow)), held)
        let ends = endStream && accepted == held
        if ends { weEnded(id) }
        streams[id]?.sendWindow -= accepted
        connectionSendWindow -= accepted
        return .success(H2DataFrames(stream: id, count: accepted, maxFrameSize: peer.maxFrameSize, endStream: ends))
    }

    /// Octets `stream` may send now.
    public func sendWindow(stream id: UInt32) -> Int {
        guard let stream = streams[id], stream.weMaySend else { return 0 }
        return max(0, min(stream.sendWindow, connectionSendWindow))
    }

    /// The application gave up on a stream (its client went, its upstream failed).
    public mutating func resetStream(_ id: UInt32, _ code: H2ErrorCode) -> [H2Action] {
        guard state != .closed, streams[id] != nil else { return [] }
        write(.rstStream(stream: id, code))
        close(id, .resetByUs)
        return flush()
    }

    /// Graceful shutdown (§6.8): no stream above the last one opened will be accepted; the driver
    /// closes once `activeStreamCount` is zero.
    public mutating func goAway() -> [H2Action] {
        guard state == .open || state == .awaitingPeerSettings else { return [] }
        write(.goaway(lastStream: lastPeerStream, .noError, debug: []))
        state = .draining(lastStream: lastPeerStream)
        return flush()
    }

    /// The block is encoded straight into the output behind a HEADERS frame header written
    /// once its length is known; only a block larger than a frame is moved, to be split.
    private mutating func writeBlock(_ id: UInt32, _ fields: some HPACKHeaderList, endStream: Bool) {
        let start = output.count
        output.append(contentsOf: H2FrameWriter.headerPlaceholder)
        encoder.encode(fields, into: &output)
        let length = output.count - start - H2FrameWriter.frameHeaderLength
        guard length > peer.maxFrameSize else {
            H2FrameWriter.headersFrameHeader(length: length, stream: id, endStream: endStream, endHeaders: true, at: start, in: &output)
            return
        }
        let block = Array(output[(start + H2FrameWriter.frameHeaderLength)...])
        output.removeSubrange(start...)
        H2FrameWriter.headerBlock(block, stream: id, endStream: endStream, maxFrameSize: peer.maxFrameSize, into: &output)
    }

    /// We sent END_STREAM.
    private mutating func weEnded(_ id: UInt32) {
        switch streams[id]?.state {
        case .open?: streams[id]!.state = .halfClosedLocal
        case .halfClosedRemote?: close(id, .finished)
        default: break
        }
    }
}
