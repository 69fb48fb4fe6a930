import CountersignHTTP

/// One response read from a stream's input: its head (interim 1xx heads dropped), then its
/// body by the head's framing. What the token fetch and the parent's answer to CONNECT read;
/// the exchange reads the same way, with its own machine deciding between head and body.
struct ResponseReader {
    enum HeadRead {
        case incomplete
        case invalid(HTTPParseError)
        case complete(ResponseHead)
    }

    private var headReader = BufferedHeadReader(.response)
    private var pump: BodyPump?
    private let maxHeadBytes: Int
    /// The request's method decides the framing of the answer (no body for HEAD; CONNECT's 2xx
    /// starts a tunnel).
    private let requestMethod: String

    init(maxHeadBytes: Int, requestMethod: String) {
        self.maxHeadBytes = maxHeadBytes
        self.requestMethod = requestMethod
    }

    /// The next final head; its bytes leave `input`, and its body is what `body` reads next.
    mutating func head(from input: EventBuffer) -> HeadRead {
        while true {
            switch headReader.response(from: input, maxHeadBytes: maxHeadBytes) {
            case .incomplete:
                return .incomplete
            case .invalid(let error):
                return .invalid(error)
            case .complete(let head, let consumed):
                input.drain(consumed)
                if head.isInterim { continue }
                pump = BodyPump((try? BodyFraming.forResponse(head, requestMethod: requestMethod)) ?? .untilClose, output: .raw)
                return .complete(head)
            }
        }
    }

    /// Moves the last head's body from `input` to `body`, at most `room` bytes more.
    mutating func body(from input: EventBuffer, to body: EventBuffer, room: Int) -> BodyPump.Progress {
        guard var pump else { return .waiting }
        let progress = pump.pump(from: input, to: body, room: room)
        self.pump = pump
        return progress
    }

    /// The body ends when the connection does: its end of file completes it.
    var bodyEndsAtClose: Bool { pump?.isUntilClose ?? false }
}
