import CountersignHTTP

/// One HTTP/2 stream from a client, carried as an HTTP/1.1 connection: a bufferevent pair whose
/// far end is the `Stream` of an ordinary `ClientConnection` (so the stream gets routing,
/// injection, signing, challenges and replays, verification and the access log exactly as
/// HTTP/1.1 does). The request goes in as HTTP/1.1 octets (`H2ToH1Translation`), the response
/// comes back through `H1ToH2Translator` into HEADERS, DATA and trailers.
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

    /// What the pair's near end holds before it stops taking the exchange's response octets.
    static let responseBuffer = 64 * 1024

    unowned let session: H2ClientSession
    let id: UInt32
    private let end: Stream
    private var inner: ClientConnection?
    private let requestHead: [UInt8]
    private let body: H2ToH1Translation.BodyEncoding
    private var translator: H1ToH2Translator
    /// Request body octets written to the pair and not yet credited to the client's window.
    private var uncredited = 0
    private var phase = Phase.running

    init?(session: H2ClientSession, id: UInt32, fields: [HPACKField], endStream: Bool) {
        let context = session.context
        guard let (near, far) = Stream.pair(base: context.base) else { return nil }
        self.session = session
        self.id = id
        end = near
        (requestHead, body) = H2ToH1Translation.head(fields, endStream: endStream)
        let method = fields.first { $0.name == Array(":method".utf8) }?.valueText ?? "GET"
        translator = H1ToH2Translator(.response(requestMethod: method), maxHeadBytes: context.config.limits.maxHeaderBytes)
        inner = ClientConnection(context: context, stream: far, peer: session.peer, listener: session.listener,
                                 interception: session.interception, clientProtocol: .http2)
    }

    func start() {
        end.delegate = self
        end.setWatermarks(readHigh: Self.responseBuffer, writeBudget: 0)
        end.enableReadWrite()
        inner?.closedHook = { [weak self] in self?.innerClosed() }
        inner?.start()
        end.write(requestHead)
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

    /// Moves what the exchange wrote, as far as the stream's window allows.
    func pump() {
        guard phase != .ended, let input = end.input else { return }
        while input.count > 0 {
            let available = input.count
            guard let bytes = input.pullUp(available) else { return }
            let consumed: Int
            let outputs: [H1ToH2Translator.Output]
            do {
                (consumed, outputs) = try translator.translate(bytes, allowance: session.sendWindow(id))
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
        exchange?.shutdown(.now)
        end.close()
    }
}
