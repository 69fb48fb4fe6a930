/// The peer's HEADERS, CONTINUATION and DATA: header blocks assembled and decoded, streams
/// opened and moved through their states (RFC 9113 §5.1, §6.1, §6.2, §6.10, §8.1).
extension H2Connection {
    mutating func startBlock(_ id: UInt32, _ fragment: [UInt8], endStream: Bool, endHeaders: Bool, dependsOnItself: Bool, now: UInt64) throws(H2Failure) {
        guard fragment.count <= limits.maxHeaderBlockOctets else { throw .connection(.enhanceYourCalm, reason: "header block above its limit") }
        pendingBlock = PendingBlock(stream: id, fragment: fragment, endStream: endStream, continuations: 0, dependsOnItself: dependsOnItself)
        if endHeaders { try finishBlock(now: now) }
    }

    mutating func continueBlock(_ fragment: [UInt8], endHeaders: Bool, now: UInt64) throws(H2Failure) {
        pendingBlock!.continuations += 1
        // CONTINUATION flood: many frames (even empty ones) for one block cost work without end.
        guard pendingBlock!.continuations <= limits.maxContinuationFrames,
              pendingBlock!.fragment.count + fragment.count <= limits.maxHeaderBlockOctets else {
            throw .connection(.enhanceYourCalm, reason: "header block above its limit (CONTINUATION flood)")
        }
        pendingBlock!.fragment += fragment
        if endHeaders { try finishBlock(now: now) }
    }

    /// Decodes the block whatever becomes of its stream (the HPACK context is shared, §4.3),
    /// then decides what it is: a new stream's head, a response head, or trailers.
    private mutating func finishBlock(now: UInt64) throws(H2Failure) {
        let block = pendingBlock!
        pendingBlock = nil
        // nil: above SETTINGS_MAX_HEADER_LIST_SIZE (the block still went through the table).
        let fields: [HPACKField]?
        do {
            fields = try decoder.decode(block.fragment)
        } catch .headerListTooLarge {
            fields = nil
        } catch {
            throw .connection(.compressionError, reason: "header block not decodable: \(error)")
        }
        let id = block.stream
        let peerInitiated = (id % 2 == 1) == (role == .server)
        if block.dependsOnItself {
            if peerInitiated, isIdle(id) { lastPeerStream = id }
            try streamError(id, .protocolError, "a stream depends on itself", now: now)
            return
        }
        if let stream = streams[id] {
            guard let fields else { try streamError(id, .enhanceYourCalm, "header list above SETTINGS_MAX_HEADER_LIST_SIZE", now: now); return }
            try continueStream(id, stream, fields, endStream: block.endStream, now: now)
            return
        }
        if isIdle(id) {
            // Only a client opens streams with HEADERS; a server's would need a PUSH_PROMISE we refuse.
            guard peerInitiated, role == .server else { throw .connection(.protocolError, reason: "HEADERS opening a stream it may not open") }
            guard let fields else { try refuseLargeRequest(id, endStream: block.endStream, now: now); return }
            try openPeerStream(id, fields, endStream: block.endStream, now: now)
            return
        }
        try closedStreamFrame(id, "HEADERS", now: now)
    }

    /// RFC 9113 §10.5.1: a request whose header list is above our limit gets a 431, and the
    /// connection goes on (its block was decoded, so HPACK stays in step).
    private mutating func refuseLargeRequest(_ id: UInt32, endStream: Bool, now: UInt64) throws(H2Failure) {
        lastPeerStream = id
        if case .draining(let last) = state, id > last { return }
        var block: [UInt8] = []
        encoder.encode([HPACKField(":status", "431"), HPACKField("content-length", "0")], into: &block)
        H2FrameWriter.headerBlock(block, stream: id, endStream: true, maxFrameSize: peer.maxFrameSize, into: &output)
        // The rest of the request is not wanted (§8.1: a complete response, then NO_ERROR).
        if !endStream { write(.rstStream(stream: id, .noError)) }
        closedStreams.record(id, endStream ? .finished : .resetByUs)
        guard resets.allow(at: now) else { throw .connection(.enhanceYourCalm, reason: "too many streams reset (rapid reset)") }
    }

    /// A frame other than PRIORITY or WINDOW_UPDATE on a stream that is no longer open (§5.1).
    mutating func closedStreamFrame(_ id: UInt32, _ type: String, now: UInt64) throws(H2Failure) {
        switch closedStreams.reason(id) {
        case .resetByUs?: return
        case .resetByPeer?: try streamError(id, .streamClosed, "\(type) after RST_STREAM", now: now)
        case .finished?: throw .connection(.streamClosed, reason: "\(type) on a closed stream")
        case nil where type == "HEADERS":
            // §5.1.1: a new stream must have a higher identifier than every one before.
            throw .connection(.protocolError, reason: "HEADERS on a stream below the highest opened")
        case nil:
            // Skipped over, or closed longer ago than we remember: closed all the same.
            try streamError(id, .streamClosed, "\(type) on a closed stream", now: now)
        }
    }

    private mutating func openPeerStream(_ id: UInt32, _ fields: [HPACKField], endStream: Bool, now: UInt64) throws(H2Failure) {
        lastPeerStream = id
        if case .draining(let last) = state, id > last { return } // §6.8: ignored after our GOAWAY
        guard streams.count < limits.maxConcurrentStreams else {
            try streamError(id, .refusedStream, "above SETTINGS_MAX_CONCURRENT_STREAMS", now: now)
            return
        }
        let summary: H2FieldValidation.Summary
        switch H2FieldValidation.validate(fields, as: .request) {
        case .failure(let reason): try streamError(id, .protocolError, "malformed request: \(reason)", now: now); return
        case .success(let valid): summary = valid
        }
        if endStream, let length = summary.contentLength, length != 0 {
            try streamError(id, .protocolError, "malformed request: \(H2MalformedReason.contentLengthMismatch)", now: now)
            return
        }
        streams[id] = H2Stream(state: endStream ? .halfClosedRemote : .open, sendWindow: peer.initialWindowSize,
                               receiveWindow: limits.streamWindow, inbound: endStream ? .ended : .body(remaining: summary.contentLength))
        actions.append(.head(stream: id, fields: fields, endStream: endStream))
    }

    /// A further block on a known stream: trailers, or (client role) a response head.
    private mutating func continueStream(_ id: UInt32, _ stream: H2Stream, _ fields: [HPACKField], endStream: Bool, now: UInt64) throws(H2Failure) {
        guard stream.peerMaySend else { try streamError(id, .streamClosed, "HEADERS after END_STREAM", now: now); return }
        switch stream.inbound {
        case .awaitingHead:
            let summary: H2FieldValidation.Summary
            switch H2FieldValidation.validate(fields, as: .response) {
            case .failure(let reason): try streamError(id, .protocolError, "malformed response: \(reason)", now: now); return
            case .success(let valid): summary = valid
            }
            let status = summary.status!
            if status < 200 {
                // Interim: more heads follow; one cannot end the stream.
                guard !endStream, status != 101 else { try streamError(id, .protocolError, "malformed interim response", now: now); return }
                actions.append(.head(stream: id, fields: fields, endStream: false))
                return
            }
            let bodiless = stream.requestWasHead || status == 204 || status == 304
            let remaining = bodiless ? nil : summary.contentLength
            if endStream, let remaining, remaining != 0 {
                try streamError(id, .protocolError, "malformed response: \(H2MalformedReason.contentLengthMismatch)", now: now)
                return
            }
            streams[id]!.inbound = endStream ? .ended : .body(remaining: remaining)
            actions.append(.head(stream: id, fields: fields, endStream: endStream))
        case .body(let remaining):
            // §8.1: after the head, only trailers, which end the stream.
            guard endStream else { try streamError(id, .protocolError, "malformed: \(H2MalformedReason.secondHeadWithoutEndStream)", now: now); return }
            if case .failure(let reason) = H2FieldValidation.validate(fields, as: .trailers) {
                try streamError(id, .protocolError, "malformed trailers: \(reason)", now: now)
                return
            }
            if let remaining, remaining != 0 {
                try streamError(id, .protocolError, "malformed: \(H2MalformedReason.contentLengthMismatch)", now: now)
                return
            }
            streams[id]!.inbound = .ended
            actions.append(.trailers(stream: id, fields: fields))
        case .ended:
            try streamError(id, .streamClosed, "HEADERS after END_STREAM", now: now)
            return
        }
        if endStream { peerEnded(id) }
    }

    mutating func receiveData(_ id: UInt32, _ data: [UInt8], endStream: Bool, flowLength: Int, now: UInt64) throws(H2Failure) {
        guard flowLength <= connectionReceiveWindow else { throw .connection(.flowControlError, reason: "DATA beyond the connection window") }
        connectionReceiveWindow -= flowLength
        guard !isIdle(id) else { throw .connection(.protocolError, reason: "DATA on an idle stream") }
        guard let stream = streams[id], stream.peerMaySend else {
            // Not delivered: its octets go back to the connection window at once.
            creditConnection(flowLength)
            if streams[id] != nil { try streamError(id, .streamClosed, "DATA after END_STREAM", now: now); return }
            try closedStreamFrame(id, "DATA", now: now)
            return
        }
        guard case .body(let remaining) = stream.inbound else {
            creditConnection(flowLength)
            try streamError(id, .protocolError, "DATA before a final head", now: now)
            return
        }
        guard flowLength <= stream.receiveWindow else {
            creditConnection(flowLength)
            try streamError(id, .flowControlError, "DATA beyond the stream window", now: now)
            return
        }
        streams[id]!.receiveWindow -= flowLength
        // Padding is ours to drop: consumed now.
        if flowLength > data.count { credit(id, flowLength - data.count) }
        if let remaining {
            guard data.count <= remaining, !endStream || data.count == remaining else {
                try streamError(id, .protocolError, "malformed: \(H2MalformedReason.contentLengthMismatch)", now: now)
                return
            }
            streams[id]!.inbound = .body(remaining: remaining - data.count)
        }
        if endStream { streams[id]!.inbound = .ended }
        actions.append(.data(stream: id, data, endStream: endStream))
        if endStream { peerEnded(id) }
    }

    /// The peer sent END_STREAM.
    private mutating func peerEnded(_ id: UInt32) {
        switch streams[id]?.state {
        case .open?: streams[id]!.state = .halfClosedRemote
        case .halfClosedLocal?: close(id, .finished)
        default: break
        }
    }

    mutating func close(_ id: UInt32, _ reason: H2ClosedReason) {
        streams[id] = nil
        closedStreams.record(id, reason)
    }

    /// The driver passed on `count` body octets of `stream`: the windows reopen by as much,
    /// announced once half a window has been consumed (fewer, larger WINDOW_UPDATEs).
    public mutating func consumed(stream id: UInt32, count: Int) -> [H2Action] {
        guard state != .closed else { return [] }
        credit(id, count)
        return flush()
    }

    mutating func credit(_ id: UInt32, _ count: Int) {
        creditConnection(count)
        if streams[id]?.peerMaySend == true {
            streams[id]!.consumedUnannounced += count
            let pending = streams[id]!.consumedUnannounced
            if pending >= limits.streamWindow / 2 {
                write(.windowUpdate(stream: id, increment: UInt32(pending)))
                streams[id]!.receiveWindow += pending
                streams[id]!.consumedUnannounced = 0
            }
        }
    }

    mutating func creditConnection(_ count: Int) {
        connectionConsumedUnannounced += count
        if connectionConsumedUnannounced >= limits.connectionWindow / 2 {
            write(.windowUpdate(stream: 0, increment: UInt32(connectionConsumedUnannounced)))
            connectionReceiveWindow += connectionConsumedUnannounced
            connectionConsumedUnannounced = 0
        }
    }
}
