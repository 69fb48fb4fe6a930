import CountersignHTTP

/// Reads "a response head, then its body" from a stream's input, for every reader of
/// responses: the exchange (which forwards interim heads and whose machine decides each
/// body's framing), the token fetch and the parent's answer to CONNECT. Heads are bounded by
/// `maxHeadBytes`; a body leaves `input` by its framing only, to where it goes or dropped,
/// and what follows it stays for the next head.
struct ResponseReader {
    enum HeadRead {
        case incomplete
        case invalid(HTTPParseError)
        case complete(ResponseHead)
    }

    private var headReader = BufferedHeadReader(.response)
    private var pump: BodyPump?
    private let maxHeadBytes: Int

    init(maxHeadBytes: Int) {
        self.maxHeadBytes = maxHeadBytes
    }

    /// The next head, interim (1xx) or final; its bytes leave `input`. Whatever body it has is
    /// read once `expectBody` named its framing. `arrays`: where the fields of the heads parsed
    /// one after another are kept (`HeadArrays`).
    mutating func head(from input: EventBuffer, arrays: inout HeadArrays) -> HeadRead {
        switch headReader.response(from: input, maxHeadBytes: maxHeadBytes, arrays: &arrays) {
        case .incomplete:
            return .incomplete
        case .invalid(let error):
            return .invalid(error)
        case .complete(let head, let consumed):
            input.drain(consumed)
            pump = nil
            return .complete(head)
        }
    }

    /// The next final head, interim heads dropped (the token fetch and the CONNECT answer
    /// have no client to show them to).
    mutating func finalHead(from input: EventBuffer) -> HeadRead {
        var arrays = HeadArrays()
        while true {
            let read = head(from: input, arrays: &arrays)
            if case .complete(let head) = read, head.isInterim { continue }
            return read
        }
    }

    /// The body of `head` (the last one read, the answer to a `requestMethod` request) follows
    /// by its own framing, an invalid framing thrown. For answers read whole by the proxy
    /// itself: the exchange's machine, and the challenge rule (`ChallengeBody`), name the
    /// framing of the bodies they read.
    mutating func expectBody(of head: ResponseHead, requestMethod: String, output: BodyPump.Output) throws {
        expectBody(try BodyFraming.forResponse(head, requestMethod: requestMethod), output: output)
    }

    /// The last head's body is framed as `framing`; `output`: its chunked framing passed on
    /// (re-encoded) or removed.
    mutating func expectBody(_ framing: BodyFraming, output: BodyPump.Output) {
        pump = BodyPump(framing, output: output)
    }

    /// Moves the last head's body from `input` to `body`, at most `room` bytes more; `moved`:
    /// the payload bytes this call moved (one access for the exchange's per-read count).
    mutating func body(from input: EventBuffer, to body: EventBuffer, room: Int) -> (progress: BodyPump.Progress, moved: UInt64) {
        guard pump != nil else { return (.waiting, 0) }
        // The pump is used where it lies (`pump!`), never copied out and back, on every read.
        let before = pump!.bytesMoved
        let progress = pump!.pump(from: input, to: body, room: room)
        return (progress, pump!.bytesMoved - before)
    }

    /// Reads and drops what has come of the last head's body (`trash` is emptied after).
    mutating func discardBody(from input: EventBuffer, through trash: EventBuffer) -> BodyPump.Progress {
        let progress = body(from: input, to: trash, room: .max).progress
        trash.drainAll()
        return progress
    }

    /// The connection ended: what is left of a body that ends with it goes to `body`; the
    /// payload bytes moved.
    @discardableResult
    mutating func restOfBody(from input: EventBuffer, to body: EventBuffer) -> UInt64 {
        self.body(from: input, to: body, room: .max).moved
    }

    /// The body ends when the connection does: its end of file completes it.
    var bodyEndsAtClose: Bool { pump?.isUntilClose ?? false }
}
