/// An absolute bound on receiving one whole thing: a request or response head, a TLS
/// handshake, a parent proxy's answer to CONNECT. It starts when the thing begins and no
/// byte pushes it back, unlike a bufferevent's read timeout, which every read restarts (an
/// idle timeout: a peer sending one byte at a time would never meet it).
final class Deadline {
    enum State: Equatable {
        case idle
        /// Running since this `MonotonicClock` instant.
        case running(since: Double)
    }

    private(set) var state: State = .idle
    private let base: OpaquePointer
    private let expired: () -> Void
    private lazy var timer = Timer(base: base) { [unowned self] in
        self.state = .idle
        self.expired()
    }

    init(base: OpaquePointer, expired: @escaping () -> Void) {
        self.base = base
        self.expired = expired
    }

    var isRunning: Bool { state != .idle }

    /// Starts the clock, unless it already runs: then the thing began earlier and keeps
    /// the bound it started with.
    func begin(seconds: Double) {
        guard state == .idle else { return }
        state = .running(since: MonotonicClock.now())
        timer.arm(seconds: seconds)
    }

    /// A new thing begins now, whatever ran before (the handshake after a CONNECT).
    func restart(seconds: Double) {
        end()
        begin(seconds: seconds)
    }

    /// The thing arrived whole (or is no longer awaited).
    func end() {
        guard state != .idle else { return }
        state = .idle
        timer.cancel()
    }
}
