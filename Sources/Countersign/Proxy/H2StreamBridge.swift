import CountersignHTTP

/// One HTTP/2 stream from a client, carried as an HTTP/1.1 connection: a bufferevent pair whose
/// far end is the `Stream` of an ordinary `ClientConnection` (so the stream gets routing,
/// injection, signing, challenges and replays, verification and the access log exactly as
/// HTTP/1.1 does). Heads cross as parsed heads, never as octets parsed back: the request head
/// is built from the fields (`H2ToH1Translation.requestHead`) and handed to the connection, and
/// the exchange hands its response heads here (`ResponseHeadSink`), sent as HEADERS. Bodies
/// cross the pair as HTTP/1.1 octets: the request's framed as its head says, the response's
/// translated by `H1ToH2Translator` into DATA and trailers. What the connection answers itself
/// (a proxy error) comes as octets and is translated whole.
///
/// Flow control both ways: the client's DATA is credited back to its window only once it has
/// left this end of the pair (so a stream whose exchange is not reading holds at most its window
/// here), and response octets are taken from the pair only as far as the stream's send window
/// allows (the rest waits in the pair, whose watermarks stop the exchange's reading upstream).
final class H2StreamBridge: StreamDelegate {
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

    /// What the pair's near end holds before it stops taking the exchange's response octets.
    static let responseBuffer = 64 * 1024

    unowned let session: H2ClientSession
    let id: UInt32
    private let end: Stream
    private var inner: ClientConnection?
    /// The request head, or why HTTP/1.1 could not carry it (answered as a bad head is).
    private let request: Result<RequestHead, HTTPParseError>
    private let body: H2ToH1Translation.BodyEncoding
    private var translator: H1ToH2Translator
    /// Request body octets written to the pair and not yet credited to the client's window.
    private var uncredited = 0
    private var phase = Phase.running
    /// A final head with a body to follow waits for the body's first octets, which cross the
    /// pair a loop iteration later: sent at once, HEADERS left in one write and DATA in the
    /// next, and a relay with Nagle's algorithm held the second for its peer's delayed ACK
    /// (h2load through socat fell from 14k to 3k requests a second).
    private var heldHead: H2ResponseFields?

    init?(session: H2ClientSession, id: UInt32, fields: [HPACKField], endStream: Bool) {
        let context = session.context
        guard let (near, far) = Stream.pair(base: context.base) else { return nil }
        self.session = session
        self.id = id
        end = near
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
        inner = ClientConnection(context: context, stream: far, peer: session.peer, listener: session.listener,
                                 interception: session.interception, clientProtocol: .http2)
    }

    func start() {
        end.delegate = self
        end.setWatermarks(readHigh: Self.responseBuffer, writeBudget: 0)
        end.enableReadWrite()
        inner?.closedHook = { [weak self] in self?.innerClosed() }
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
        var bytes = H2ToH1Translation.data(data, as: body)
        if endStream { bytes += H2ToH1Translation.end(trailers: [], as: body) }
        uncredited += data.count
        end.write(bytes)
    }

    func receivedTrailers(_ fields: [HPACKField]) {
        end.write(H2ToH1Translation.end(trailers: fields, as: body))
    }

    func streamWritable(_ stream: Stream) {
        guard uncredited > 0, end.outputLength == 0 else { return }
        let count = uncredited
        uncredited = 0
        session.consumed(id, count: count)
    }

    // MARK: - The response

    func streamReadable(_ stream: Stream) { pump() }

    func stream(_ stream: Stream, event: StreamEvent) { innerClosed() }

    /// Moves what the exchange wrote, as far as the stream's window allows: body octets go
    /// from the pair's buffer into DATA frames as they lie there; heads, chunk lines and
    /// trailers are read from a pulled-up block and translated.
    func pump() {
        guard phase != .ended, let input = end.input else { return }
        if let head = heldHead {
            heldHead = nil
            session.sendHead(head, endStream: false, on: id)
        }
        while input.count > 0 {
            let body = translator.bodyOctetsAhead(of: input.count)
            if body > 0 {
                let count = min(body, session.sendWindow(id))
                guard count > 0 else { break }
                let sent = session.sendBody(from: input, count: count, endStream: translator.bodyEnds(after: count), on: id)
                guard sent > 0 else { break }
                translator.passedOn(sent)
                if translator.isDone { return finish(resetWith: nil) }
                continue
            }
            let available = input.count
            guard let bytes = input.pullUp(available) else { return }
            let consumed: Int
            let outputs: [H1ToH2Translator.Output]
            do {
                // No allowance: body octets are moved above, never copied out of the block.
                (consumed, outputs) = try translator.translate(bytes, allowance: 0)
            } catch {
                return finish(resetWith: .internalError)
            }
            input.drain(consumed)
            for output in outputs { _ = session.send(output, on: id) }
            if translator.isDone { return finish(resetWith: nil) }
            if consumed == 0 { break }
        }
        guard phase == .innerClosed, input.count == 0 else { return }
        // The exchange's connection closed: the end of a body read until close, or a cut response.
        guard let outputs = try? translator.endOfInput() else { return finish(resetWith: .internalError) }
        for output in outputs { _ = session.send(output, on: id) }
        finish(resetWith: nil)
    }

    private func innerClosed() {
        guard phase == .running else { return }
        phase = .innerClosed
        inner = nil
        pump()
    }

    // MARK: - Ending

    /// The response went out whole (or could not): the stream is over for the session.
    private func finish(resetWith code: H2ErrorCode?) {
        guard phase != .ended else { return }
        release()
        session.bridgeEnded(id, resetWith: code)
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
        // The body crosses the pair chunked as it came (its trailers become HTTP/2 trailers).
        guard phase != .ended else { return .chunked }
        let ended = translator.bodyFollows(framing)
        let fields = ForwardedHeads.h2Fields(response, via: receivedIn ?? response.version)
        if ended {
            session.sendHead(fields, endStream: true, on: id)
            session.later(.finishAfterHead, for: id)
        } else {
            heldHead = fields
        }
        return .chunked
    }
}
