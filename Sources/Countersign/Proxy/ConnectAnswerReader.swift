import CountersignHTTP

/// The parent proxy's answers to CONNECT, read with the one response reader and told to the
/// dial as its events: the answer's head, then, once a 407 is answered, its body dropped by
/// the framing the dial named (`ChallengeBody`, the rule of an origin's 401).
struct ConnectAnswerReader {
    private var reader: ResponseReader
    /// Named in the error for a head over it.
    private let maxHeadBytes: Int

    init(maxHeadBytes: Int) {
        self.maxHeadBytes = maxHeadBytes
        reader = ResponseReader(maxHeadBytes: maxHeadBytes)
    }

    /// The 407's body comes next, framed as `framing`.
    mutating func expectChallengeBody(_ framing: BodyFraming) {
        reader.expectBody(framing, output: .raw)
    }

    /// What `input` (and `trash`, where a dropped body passes) makes of the step the dial is
    /// at; nil while more bytes are needed.
    mutating func event(for reading: UpstreamDial.Reading, from input: EventBuffer, trash: EventBuffer) -> UpstreamDial.Event? {
        switch reading {
        case .nothing:
            return nil
        case .connectAnswer:
            switch reader.finalHead(from: input) {
            case .incomplete:
                return nil
            case .invalid(let error) where error.kind == .headTooLarge:
                return .stepImpossible(ProxyError(.httpResponseHeaderSectionSize,
                                                  details: "parent proxy answered CONNECT with a head over max_header_bytes (\(maxHeadBytes))"))
            case .invalid(let error):
                return .stepImpossible(ProxyError(.httpProtocolError, details: "parent proxy answered CONNECT with an invalid head: \(error.detail)"))
            case .complete(let response):
                return .connectAnswered(response)
            }
        case .challengeBody:
            switch reader.discardBody(from: input, through: trash) {
            case .waiting: return nil
            case .finished: return .challengeBodyDiscarded
            case .failed(let error): return .challengeBodyInvalid(detail: error.detail)
            }
        }
    }
}
