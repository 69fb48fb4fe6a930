import CLibevent
import CountersignAdmin
import CountersignAuth
import CountersignHTTP
import CountersignLog
import Foundation
import CountersignSupport

/// The facts of one exchange that end up on its access log line. Only named facts: never
/// a header value, so credentials cannot reach the log by accident.
///
/// A class: one record follows its exchange from the routing to the log line, and as a
/// struct of a dozen strings it was copied twice per request on the way. A client connection
/// reuses its record for its next exchange (`restart`) once its line is written and its facts
/// cleared (`clear`) and nothing else holds it.
final class AccessRecord {
    /// Formatted only when the line is written: most exchanges are never logged at all
    /// when `log.access` is off.
    var client: PeerAddress
    var clientProtocol = ClientProtocol.http11
    var scheme = "http"
    var method = "-"
    var host = "-"
    var port = 0
    /// The request target as the client sent it: made loggable (query and userinfo left out,
    /// `LoggableTarget`) only when the line is written, since most lines never are.
    var target = "-"
    var status = 0
    var upstreamStatus: Int?
    var auth: AuthNote?
    /// Why a preferred scheme was not used (Kerberos had no ticket, so NTLM answered).
    var authFallback: String?
    /// The credentials whose placeholders were resolved (names, never values).
    var placeholders: String?
    /// The OAuth2 credentials whose access tokens were injected, and when they were taken: a
    /// `401` retires those tokens (not logged).
    var injectedTokens: (credentials: [String], takenAt: Date)?
    /// The request went with an RFC 9421 signature of ours.
    var signed = false
    /// The response was verified (`verify_responses`) before it was released.
    var verified = false
    var bytesIn: UInt64 = 0
    var bytesOut: UInt64 = 0
    var error: String?
    /// The `details` of the `Proxy-Status` the client got (a trust refusal names the
    /// certificate and why), so the log says as much as the client saw.
    var errorDetails: String?
    private(set) var started = MonotonicClock.now()

    init(client: PeerAddress) {
        self.client = client
    }

    /// Where the record is: gathering its exchange's facts, or its line written and every
    /// fact cleared (`clear`), when only it may serve its connection's next exchange (`restart`).
    enum Phase { case gathering, cleared }
    private(set) var phase = Phase.gathering

    /// Called once the line is written: every fact goes back to what a new record says (the
    /// client stays: a record serves one connection), so what this exchange said of its
    /// request (a target's query, auth notes, placeholder and token names, error details) is
    /// not kept until the next one.
    func clear() {
        clientProtocol = .http11
        scheme = "http"
        method = "-"
        host = "-"
        port = 0
        target = "-"
        status = 0
        upstreamStatus = nil
        // Facts most exchanges never gather are cleared only when there: storing nil over nil
        // still destroyed the old value, a call each.
        if auth != nil { auth = nil }
        if authFallback != nil { authFallback = nil }
        if placeholders != nil { placeholders = nil }
        if injectedTokens != nil { injectedTokens = nil }
        signed = false
        verified = false
        bytesIn = 0
        bytesOut = 0
        if error != nil { error = nil }
        if errorDetails != nil { errorDetails = nil }
        phase = .cleared
    }

    /// The cleared record begins its connection's next exchange, now.
    func restart() {
        precondition(phase == .cleared, "an access record restarted before its line was written")
        phase = .gathering
        started = MonotonicClock.now()
    }

    /// Body bytes the client sent that went upstream: for the line and the metric, which
    /// count forwarded and intercepted exchanges as the relays count tunnels.
    func countRequestBody(_ count: UInt64) {
        bytesIn += count
        // Process-wide: held throughout (not retained around the add).
        withHeld(Metrics.shared.bytesFromClients) { $0.add(Int(count)) }
    }

    /// Body bytes sent to the client.
    func countResponseBody(_ count: UInt64) {
        bytesOut += count
        withHeld(Metrics.shared.bytesToClients) { $0.add(Int(count)) }
    }

    /// Inlined: with the access log off (the usual case) nothing is called, and the call
    /// retained the logger.
    @inline(__always) func write(to log: Logger) {
        // Process-wide: held throughout (not retained around the add).
        withHeld(clientProtocol.exchanges) { $0.add() }
        guard log.accessLogEnabled else { return }
        writeLine(to: log)
    }

    private func writeLine(to log: Logger) {
        var fields: [(String, LogValue)] = [
            ("client", .string(client.description)), ("scheme", .string(scheme)), ("method", .string(method)),
            ("host", .string(host)), ("port", .int(port)), ("path", .string(LoggableTarget.of(target))), ("protocol", .string(clientProtocol.name)),
            ("status", .int(status)),
        ]
        if let upstreamStatus { fields.append(("upstream_status", .int(upstreamStatus))) }
        if let auth { fields.append(("auth", .string(auth.text))) }
        if let authFallback { fields.append(("auth_fallback", .string(authFallback))) }
        if let placeholders { fields.append(("placeholders", .string(placeholders))) }
        if signed { fields.append(("signed", .bool(true))) }
        if verified { fields.append(("verified", .bool(true))) }
        fields.append(("bytes_in", .int(Int(bytesIn))))
        fields.append(("bytes_out", .int(Int(bytesOut))))
        fields.append(("duration_ms", .double(((MonotonicClock.now() - started) * 1000 * 1000).rounded() / 1000)))
        if let error { fields.append(("error", .string(error))) }
        if let errorDetails { fields.append(("error_details", .string(errorDetails))) }
        log.access(fields)
    }
}

/// What the access line says of authentication, kept as values: its text is built only
/// when the line is written (most exchanges are never logged).
enum AuthNote: ExpressibleByStringInterpolation {
    /// What the one answerer did (`basic:preemptive`): the usual case, held without an array.
    case outcome(AuthOutcome)
    /// What each answerer did, in status order (`digest:answered,ntlm:answered`).
    case outcomes([AuthOutcome])
    /// A challenge passed on because its space is locked out.
    case blocked
    case text(String)

    init(stringLiteral value: String) { self = .text(value) }

    static func preemptive(_ scheme: AuthSchemeName) -> AuthNote { .outcome(.preemptive(scheme)) }
    static func answered(_ scheme: AuthSchemeName) -> AuthNote { .outcome(.answered(scheme)) }

    /// This note with one more answerer's outcome after it; nil: the first.
    static func adding(_ outcome: AuthOutcome, to note: AuthNote?) -> AuthNote {
        switch note {
        case .outcome(let first)?: return .outcomes([first, outcome])
        case .outcomes(let earlier)?: return .outcomes(earlier + [outcome])
        case .blocked?, .text?, nil: return .outcome(outcome)
        }
    }

    /// Whether this is the one outcome `other` notes as well (no other kind is compared).
    func isOutcome(of other: AuthNote?) -> Bool {
        guard case .outcome(let outcome) = self, case .outcome(let noted)? = other else { return false }
        return outcome == noted
    }

    var text: String {
        switch self {
        case .outcome(let outcome): return outcome.spelled
        case .outcomes(let outcomes): return outcomes.map(\.spelled).joined(separator: ",")
        case .blocked: return "blocked"
        case .text(let text): return text
        }
    }
}

enum MonotonicClock {
    /// Seconds on a clock that never jumps.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
