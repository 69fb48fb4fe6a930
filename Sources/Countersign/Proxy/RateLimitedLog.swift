import CountersignLog

/// A warning that may recur many times a second (accept failures, refusals at a limit):
/// written at most once per `interval`, with how many were held back since the last line.
final class RateLimitedLog {
    private let interval: Double
    private var lastWritten = -Double.infinity
    private var suppressed = 0

    init(interval: Double = 10) { self.interval = interval }

    func warn(_ message: String, _ fields: [(String, LogValue)] = []) {
        let now = MonotonicClock.now()
        guard now - lastWritten >= interval else {
            suppressed += 1
            return
        }
        lastWritten = now
        var fields = fields
        if suppressed > 0 { fields.append(("repeated", .int(suppressed))) }
        suppressed = 0
        Logger.shared.warn(message, fields)
    }
}
