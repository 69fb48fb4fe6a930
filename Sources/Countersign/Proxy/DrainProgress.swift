import Foundation
import Synchronization

/// What a drain waits for (SPEC "Operations"): it keeps accepting and serving until no
/// client connection has been open and none arrived for `quietPeriod`, so an application
/// stopping beside the sidecar gets its last requests answered; `timeout` bounds it all.
struct DrainRule: Equatable {
    let quietPeriod: Double
    let timeout: Double

    enum Verdict: Equatable {
        case keepServing
        /// Nothing open and nothing arrived for the quiet period.
        case quiet
        case timedOut
    }

    /// `sinceBusy`: seconds since a client connection was last open or arrived (or since the
    /// drain began, when none was).
    func verdict(elapsed: Double, sinceBusy: Double) -> Verdict {
        if elapsed >= timeout { return .timedOut }
        return sinceBusy >= quietPeriod ? .quiet : .keepServing
    }
}

/// The last moment a client connection was seen, shared by the workers (which note arrivals
/// while draining) and the main loop (which notes open connections as it polls).
final class DrainProgress: Sendable {
    private let lastBusy = Atomic<UInt64>(0)

    /// Monotonic nanoseconds.
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    func noteBusy(at instant: UInt64 = DrainProgress.now()) {
        var seen = lastBusy.load(ordering: .relaxed)
        while seen < instant {
            let (exchanged, original) = lastBusy.compareExchange(expected: seen, desired: instant, ordering: .relaxed)
            if exchanged { return }
            seen = original
        }
    }

    func secondsSinceBusy(at instant: UInt64 = DrainProgress.now()) -> Double {
        let last = lastBusy.load(ordering: .relaxed)
        return instant > last ? Double(instant - last) / 1e9 : 0
    }
}
