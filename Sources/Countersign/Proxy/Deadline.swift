/// An absolute bound on receiving one whole thing: a request or response head, a TLS
/// handshake, a parent proxy's answer to CONNECT. It starts when the thing begins and no
/// byte pushes it back, unlike a bufferevent's read timeout, which every read restarts (an
/// idle timeout: a peer sending one byte at a time would never meet it).
///
/// Most deadlines are met (a response head per request), so beginning and ending one touches
/// no timer: the timer is armed for the earliest expiry it may have to report and, when it
/// fires, either reports the running deadline as passed or arms itself again for the one
/// that began since. Libevent's timer heap then sees about one operation per header_timeout,
/// not two per request.
final class Deadline {
    enum State: Equatable {
        case idle
        /// Running since this `MonotonicClock` instant, passing at `expiry`.
        case running(since: Double, expiry: Double)
    }

    private(set) var state: State = .idle
    /// What the timer is armed for; nil when it is not.
    private var timerExpiry: Double?
    private let base: OpaquePointer
    /// What a passed deadline calls (changed when a spare one is reused: `SpareDeadlines`).
    var expired: () -> Void
    private lazy var timer = Timer(base: base) { [unowned self] in self.timerFired() }

    init(base: OpaquePointer, expired: @escaping () -> Void) {
        self.base = base
        self.expired = expired
    }

    var isRunning: Bool { state != .idle }

    /// Starts the clock, unless it already runs: then the thing began earlier and keeps
    /// the bound it started with.
    func begin(seconds: Double) {
        guard state == .idle else { return }
        let now = MonotonicClock.now()
        let expiry = now + seconds
        state = .running(since: now, expiry: expiry)
        if let timerExpiry, timerExpiry <= expiry { return }
        arm(for: expiry, now: now)
    }

    /// A new thing begins now, whatever ran before (the handshake after a CONNECT).
    func restart(seconds: Double) {
        end()
        begin(seconds: seconds)
    }

    /// The thing arrived whole (or is no longer awaited).
    /// The timer, if it is armed, stays armed: it finds nothing to report.
    func end() {
        state = .idle
    }

    private func arm(for expiry: Double, now: Double) {
        timerExpiry = expiry
        timer.arm(seconds: max(expiry - now, 0))
    }

    private func timerFired() {
        timerExpiry = nil
        guard case .running(_, let expiry) = state else { return }
        let now = MonotonicClock.now()
        // Libevent waits in whole milliseconds and from the time it cached for this loop
        // iteration: a timer this close to the expiry has met it.
        if expiry - now > Self.slack { return arm(for: expiry, now: now) }
        state = .idle
        expired()
    }

    private static let slack = 0.001
}
