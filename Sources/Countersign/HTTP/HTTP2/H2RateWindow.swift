/// Counts events in a fixed window of time, to answer floods with bounded work: rapid
/// resets, SETTINGS and PING floods. The clock is the caller's (milliseconds, any origin).
struct H2RateWindow: Equatable, Sendable {
    let limit: Int
    let windowMillis: UInt64
    private var windowStart: UInt64 = 0
    private var count = 0

    init(limit: Int, windowMillis: UInt64) {
        self.limit = limit
        self.windowMillis = windowMillis
    }

    /// Records one event at `now`; false once the window holds more than `limit`.
    mutating func allow(at now: UInt64) -> Bool {
        if now < windowStart || now - windowStart >= windowMillis {
            windowStart = now
            count = 0
        }
        count += 1
        return count <= limit
    }
}
