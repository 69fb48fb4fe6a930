import CountersignHTTP

/// Holds one message body whole (the exception to streaming: a body a signature or a
/// verification needs entire), de-chunked, bounded by `limit` for this body and by the
/// process-wide `HeldBodyBudget`. What it holds is reserved in the budget until `release()`.
final class BodyHolder {
    enum Progress {
        case waiting
        case held(OwnedEventBuffer)
        case overLimit
        case budgetSpent
        case invalid(HTTPParseError)
    }

    private var pump: BodyPump
    let body: OwnedEventBuffer
    private let limit: Int
    private let budgetLimit: Int
    private(set) var reserved = 0

    init?(framing: BodyFraming, limit: Int, budgetLimit: Int) {
        guard let body = OwnedEventBuffer() else { return nil }
        self.pump = BodyPump(framing, output: .raw)
        self.body = body
        self.limit = limit
        self.budgetLimit = budgetLimit
    }

    deinit { release() }

    /// Takes what `input` holds of the body. A refusal has already given its budget back.
    func take(from input: EventBuffer) -> Progress {
        // Up to one byte past the limit may be moved, so that a body over it is seen; the budget
        // is reserved for what may be kept (never past the limit), and what was not used goes back.
        let room = limit + 1 - body.buffer.count
        let reservation = min(input.count, limit - body.buffer.count)
        guard reservation == 0 || HeldBodyBudget.shared.reserve(reservation, limit: budgetLimit) else {
            release()
            return .budgetSpent
        }
        reserved += reservation
        let progress = pump.pump(from: input, to: body.buffer, room: room)
        if body.buffer.count > limit {
            release()
            return .overLimit
        }
        let unused = reserved - body.buffer.count
        HeldBodyBudget.shared.release(unused)
        reserved -= unused
        switch progress {
        case .waiting: return .waiting
        case .finished: return .held(body)
        case .failed(let error):
            release()
            return .invalid(error)
        }
    }

    /// Gives the held bytes' budget back (the body was sent on, or dropped).
    func release() {
        HeldBodyBudget.shared.release(reserved)
        reserved = 0
    }
}
