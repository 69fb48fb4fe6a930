/// Deadlines of connections that closed, kept for new ones: every HTTP/2 stream is a client
/// connection of its own, and each made, armed and freed a deadline (and its libevent timer)
/// for its one response head, some 3k instructions a request. A spare one may still have its
/// timer armed for an expiry it will find nothing at; beginning it anew then touches no timer.
final class SpareDeadlines {
    /// Enough for the connections one worker opens and closes in a burst.
    private let spare = SparePool<Deadline>(limit: 64)
    private let base: OpaquePointer

    init(base: OpaquePointer) { self.base = base }

    /// A deadline (not running) that calls `expired` when it passes.
    func take(expired: @escaping () -> Void) -> Deadline {
        guard let deadline = spare.take() else { return Deadline(base: base, expired: expired) }
        deadline.expired = expired
        return deadline
    }

    /// `deadline`'s owner is gone: it runs no more and calls nothing.
    func giveBack(_ deadline: Deadline) {
        deadline.end()
        deadline.expired = {}
        spare.giveBack(deadline)
    }
}
