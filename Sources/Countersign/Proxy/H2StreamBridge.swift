import CountersignHTTP

/// One HTTP/2 stream from a client, carried as an HTTP/1.1 connection: an in-memory `Stream`
/// (Stream+InMemory.swift), whose peer this bridge is, is the stream of an ordinary
/// `ClientConnection` (so the stream gets routing, injection, signing, challenges and replays,
/// verification and the access log exactly as HTTP/1.1 does). Heads cross as parsed heads,
/// never as octets parsed back: the request head is built from the fields
/// (`H2ToH1Translation.requestHead`) and handed to the connection, and the exchange hands its
/// response heads here (`ResponseHeadSink`), sent as HEADERS. Bodies cross the stream's two
/// buffers as HTTP/1.1 octets: the request's framed as its head says, the response's
/// translated by `H1ToH2Translator` into DATA and trailers, moved out of the buffer the
/// exchange wrote them into when its callback ends. What the connection answers itself (a
/// proxy error) comes as octets and is translated whole.
///
/// Flow control both ways: the client's DATA is credited back to its window only once the
/// exchange has read it (so a stream whose exchange is not reading holds at most its window
/// here), and response octets are taken only as far as the stream's send window and the
/// connection's room allow (the rest waits in the stream's output, within the write budget the
/// exchange keeps to, so its reading upstream stops).
final class H2StreamBridge: InMemoryStreamPeer {
    enum Phase {
        case running
        /// The exchange's connection closed; what it wrote is still being sent.
        case innerClosed
        case ended
    }

    /// What waits until the callbacks due now have run (`H2ClientSession.later`).
    enum Deferred {
        /// The exchange starts once the whole read that opened the stream is handled: a reset
        /// in the same read (as rapid reset sends) ends the stream before an upstream is dialled.
        case start
        /// The response ended with its head, inside the exchange's own call: the stream is
        /// finished once that call has returned (finishing shuts the exchange's connection down).
        case finishAfterHead
    }

    unowned let session: H2ClientSession
    let id: UInt32
    /// The buffers the exchange's stream reads and writes: the request body goes into `input`,
    /// the response is taken from `output`.
    private let ends: InMemoryEnds
    private let end: Stream
    private var inner: ClientConnection?
    /// The request head, or why HTTP/1.1 could not carry it (answered as a bad head is).
    private let request: Result<RequestHead, HTTPParseError>
    private let body: H2ToH1Translation.BodyEncoding
    private var translator: H1ToH2Translator
    /// Request body octets given to the exchange and not yet credited to the client's window.
    private var uncredited = 0
    private var phase = Phase.running

    init?(session: H2ClientSession, id: UInt32, fields: [HPACKField], endStream: Bool) {
        let context = session.context
        guard let ends = context.takeEnds() else { return nil }
        self.session = session
        self.id = id
        self.ends = ends
        end = Stream.inMemory(ends)
        let maxHeadBytes = context.config.limits.maxHeaderBytes
        do throws(HTTPParseError) {
            let (head, body) = try H2ToH1Translation.requestHead(fields, endStream: endStream, maxHeadBytes: maxHeadBytes)
            (request, self.body) = (.success(head), body)
        } catch {
            // The connection answers it and closes: nothing of a body is read.
            (request, body) = (.failure(error), .none)
        }
        let method = (try? request.get())?.method ?? "GET"
        translator = H1ToH2Translator(.response(requestMethod: method), maxHeadBytes: maxHeadBytes)
        inner = ClientConnection(context: context, stream: end, peer: session.peer, listener: session.listener,
                                 interception: session.interception, clientProtocol: .http2)
        ends.peer = self
        ends.expectsInput = !endStream
    }

    deinit { end.close() }

    func start() {
        // Strong: the hook is dropped whenever either side ends (the exchange's shutdown, or
        // `release`). A weak capture gave every stream's bridge a side table, made and freed
        // with it, and sent its retains and releases down the slow path.
        inner?.closedHook = { [self] in innerClosed() }
        inner?.h2Stream = self
        session.later(.start, for: id)
    }

    func run(_ work: Deferred) {
        guard phase != .ended else { return }
        switch work {
        case .start:
            inner?.start(serving: request)
        case .finishAfterHead:
            if translator.isDone { finish(resetWith: nil) }
        }
    }

    // MARK: - The request

    func receivedData(_ data: [UInt8], endStream: Bool) {
        // The exchange's connection is gone: nothing reads it, the window is given back at once.
        guard phase == .running else { return session.consumed(id, count: data.count) }
        let input = ends.input.buffer
        H2ToH1Translation.data(data, as: body).withUnsafeBytes { input.add($0) }
        if endStream { requestEnded(trailers: []) }
        uncredited += data.count
        ends.awaitsRead = true
        // The exchange reads it now, not a loop turn later; what it leaves is credited once it
        // has read that too (reading with `awaitsRead` set brings `streamTouched`).
        end.inMemoryReceived()
        creditIfRead()
    }

    func receivedTrailers(_ fields: [HPACKField]) {
        guard phase == .running else { return }
        requestEnded(trailers: fields)
        end.inMemoryReceived()
    }

    private func requestEnded(trailers: [HPACKField]) {
        H2ToH1Translation.end(trailers: trailers, as: body).withUnsafeBytes { ends.input.buffer.add($0) }
        ends.expectsInput = false
    }

    /// Gives the client's window back once the exchange has read everything it was given.
    private func creditIfRead() {
        guard uncredited > 0, ends.input.buffer.isEmpty else { return }
        let count = uncredited
        uncredited = 0
        ends.awaitsRead = false
        session.consumed(id, count: count)
    }

    // MARK: - The response

    /// The exchange's callback ended having written or read: its octets go, its reading is credited.
    func streamTouched() -> Bool {
        creditIfRead()
        return pump()
    }

    /// The stream's send window opened, or room on the connection: what waited goes, and the
    /// exchange may write more.
    func windowOpened() {
        if pump() { end.inMemoryRoomOpened() }
    }

    /// Moves what the exchange wrote, as far as the stream's window and the connection's room
    /// allow (`H2ClientSession.sendAllowance`): body octets go
    /// from the buffer into DATA frames as they lie there; heads, chunk lines and trailers are
    /// read from a pulled-up block and translated. Returns whether room opened for the
    /// exchange to write more (some taken, at most a quarter of its budget left: as a
    /// bufferevent's low write watermark).
    @discardableResult
    private func pump() -> Bool {
        guard phase != .ended else { return false }
        let output = ends.output.buffer
        let before = output.count
        var stalled = false
        while output.count > 0 {
            let body = translator.bodyOctetsAhead(of: output.count)
            if body > 0 {
                let count = min(body, session.sendAllowance(id))
                let sent = count > 0 ? session.sendBody(from: output, count: count, endStream: translator.bodyEnds(after: count), on: id) : 0
                guard sent > 0 else {
                    stalled = true
                    break
                }
                translator.passedOn(sent)
                if translator.isDone { return finish(resetWith: nil) }
                continue
            }
            let available = output.count
            guard let bytes = output.pullUp(available) else { return false }
            let consumed: Int
            let outputs: [H1ToH2Translator.Output]
            do {
                // No allowance: body octets are moved above, never copied out of the block.
                (consumed, outputs) = try translator.translate(bytes, allowance: 0)
            } catch {
                return finish(resetWith: .internalError)
            }
            output.drain(consumed)
            for output in outputs { _ = session.send(output, on: id) }
            if translator.isDone { return finish(resetWith: nil) }
            if consumed == 0 { break }
        }
        let left = output.count
        ends.outputWaits(stalled: stalled, progressed: left < before)
        guard phase == .innerClosed, left == 0 else { return left < before && left <= end.writeBudget / 4 }
        // The exchange's connection closed: the end of a body read until close, or a cut response.
        guard let outputs = try? translator.endOfInput() else { return finish(resetWith: .internalError) }
        for output in outputs { _ = session.send(output, on: id) }
        return finish(resetWith: nil)
    }

    private func innerClosed() {
        guard phase == .running else { return }
        phase = .innerClosed
        inner = nil
        pump()
    }

    // MARK: - Ending

    /// The response went out whole (or could not): the stream is over for the session. Returns
    /// false: no room for the exchange, which is let go of.
    @discardableResult
    private func finish(resetWith code: H2ErrorCode?) -> Bool {
        guard phase != .ended else { return false }
        release()
        session.bridgeEnded(id, resetWith: code)
        return false
    }

    /// The session ended the stream (the client reset it, or the connection went).
    func abort() {
        release()
    }

    private func release() {
        phase = .ended
        let exchange = inner
        inner = nil
        exchange?.closedHook = nil
        exchange?.h2Stream = nil
        exchange?.shutdown(.now)
        end.close()
        // Request body octets the exchange never read (it answered first) still count against
        // the connection's window: given back, or each such stream would shrink it for good.
        if uncredited > 0 {
            session.consumed(id, count: uncredited)
            uncredited = 0
        }
        // Nothing reads or writes the buffers now (the bridge is ended): another stream may.
        session.context.keepSpare(ends)
    }
}

/// The exchange's response heads, taken as parsed heads and sent as HEADERS.
extension H2StreamBridge: ResponseHeadSink {
    func sendInterim(_ response: ResponseHead) {
        // HTTP/2 has no 101 (RFC 9113 §8.6).
        guard phase != .ended, response.status != 101 else { return }
        session.sendHead(ForwardedHeads.h2Fields(response, via: nil), endStream: false, on: id)
    }

    func sendFinal(_ response: ResponseHead, framing: BodyFraming, clientVersion: HTTPVersion, clientKeepAlive: Bool,
                   receivedIn: HTTPVersion?) -> BodyPump.Output {
        // The body crosses the in-memory stream chunked as it came (its trailers become HTTP/2 trailers).
        guard phase != .ended else { return .chunked }
        let ended = translator.bodyFollows(framing)
        // HEADERS goes now: the body the exchange writes next is taken when its callback ends,
        // and both leave in the session's one write of this loop iteration.
        session.sendHead(ForwardedHeads.h2Fields(response, via: receivedIn ?? response.version), endStream: ended, on: id)
        if ended { session.later(.finishAfterHead, for: id) }
        return .chunked
    }
}
