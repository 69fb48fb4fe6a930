import CountersignAdmin
import CountersignAuth
import CountersignConfig
import Foundation
import Synchronization

/// What Countersign has seen of each configured host, for `/metrics` and `/status`: requests
/// and proxy errors, how challenge answering went, the certificate last served and how trust
/// went; and the last refusals. One row per `hosts` entry (keyed by its pattern) plus one
/// aggregate row for every other host, so a client reaching thousands of names cannot grow
/// the table. Shared by every worker behind one lock, touched a few times per exchange.
final class Observations: Sendable {
    static let shared = Observations()
    /// The row of every host without a `hosts` entry; not a valid host pattern, so it
    /// cannot collide with one.
    static let otherRow = "(other)"
    static let refusalsKept = 50

    struct Row: Sendable {
        var requests = 0
        /// Responses the proxy made itself, by RFC 9209 error type.
        var errors: [String: Int] = [:]
        /// Challenge answering's outcomes, by `AuthOutcome.ordinal` (counted per answered
        /// request: no string is hashed for it), held inline: an array was checked for sharing
        /// on every count.
        var answerOutcomes = InlineArray<32, Int>(repeating: 0)
        /// Other auth outcomes by name (`placeholder:resolved`, `response:verified`).
        var namedAuthOutcomes: [String: Int] = [:]

        /// Every auth outcome counted, by its spelling.
        var authOutcomes: [String: Int] {
            var all = namedAuthOutcomes
            for ordinal in AuthOutcome.all.indices where answerOutcomes[ordinal] > 0 {
                all[AuthOutcome.all[ordinal].spelled, default: 0] += answerOutcomes[ordinal]
            }
            return all
        }
        /// `host:port` of the upstream that served `certificateSubject` (a wildcard entry
        /// covers several).
        var certificateUpstream: String?
        var certificateSubject: String?
        var certificateNotAfter: Int64?
        var servedPins: [String] = []
        var lastTrust: String?
        var trustRefusals = 0

        mutating func count(_ outcome: AuthOutcome) {
            answerOutcomes[outcome.ordinal] += 1
        }
    }

    /// A response the proxy made itself instead of forwarding one. `details` is what the
    /// client was told in `Proxy-Status`, never a secret.
    struct Refusal: Sendable {
        let time: Int64
        let host: String
        let status: Int
        let type: String
        let details: String
    }

    private struct State {
        /// Rows are added (`change`) and dropped (`keepRows`) only here, so
        /// `lastRow`'s index stays valid until one is.
        private(set) var rows: [String: Row] = [:]
        /// The row touched last and where it is: every exchange touches its host's row, and
        /// a run of them touch the same one, whose name (the pattern's own string) compares
        /// in a few instructions where hashing it cost ~350 a request.
        private var lastRow: (name: String, index: Dictionary<String, Row>.Index)?
        /// Oldest first; at most `refusalsKept`.
        var refusals: [Refusal] = []

        /// Changes the row `name`, added when first touched.
        mutating func change(_ name: String, _ change: (inout Row) -> Void) {
            let index: Dictionary<String, Row>.Index
            if let lastRow, lastRow.name == name {
                index = lastRow.index
            } else {
                if rows[name] == nil { rows[name] = Row() }
                index = rows.index(forKey: name)!
                lastRow = (name, index)
            }
            change(&rows.values[index])
        }

        mutating func keepRows(_ kept: Set<String>) {
            rows = rows.filter { kept.contains($0.key) }
            lastRow = nil
        }
    }

    private let state = Mutex(State())

    init() {
        precondition(AuthOutcome.all.count <= InlineArray<32, Int>.count, "a row counts at most 32 auth outcomes")
    }

    /// The row a host belongs to: its entry's pattern, else `otherRow`.
    static func row(host: String, port: Int, in hosts: HostTable) -> String {
        guard let port = UInt16(exactly: port) else { return otherRow }
        return hosts.lookup(host: host, port: port)?.pattern ?? otherRow
    }

    private func update(_ row: String, _ change: (inout Row) -> Void) {
        state.withLock { state in state.change(row, change) }
    }

    /// One exchange answered (forwarded, tunnelled or refused by the proxy with `errorType`),
    /// with the outcome of the answer it carried, if any: one lock and one lookup for both.
    func exchange(row: String, errorType: String?, authOutcome: AuthOutcome? = nil) {
        update(row) { entry in
            entry.requests += 1
            if let errorType { entry.errors[errorType, default: 0] += 1 }
            if let authOutcome { entry.count(authOutcome) }
        }
    }

    func refused(host: String, status: Int, type: String, details: String) {
        let refusal = Refusal(time: Int64(Date().timeIntervalSince1970), host: String(host.prefix(255)),
                              status: status, type: type, details: String(details.prefix(400)))
        state.withLock { state in
            state.refusals.append(refusal)
            if state.refusals.count > Self.refusalsKept { state.refusals.removeFirst(state.refusals.count - Self.refusalsKept) }
        }
    }

    func servedCertificate(row: String, upstream: String, subject: String, notAfter: Int64, pins: [String]) {
        update(row) { entry in
            entry.certificateUpstream = upstream
            entry.certificateSubject = subject
            entry.certificateNotAfter = notAfter
            entry.servedPins = pins
            entry.lastTrust = "trusted"
        }
    }

    func trustRefused(row: String, upstream: String, details: String) {
        update(row) { entry in
            entry.lastTrust = "refused (\(upstream)): \(details)"
            entry.trustRefusals += 1
        }
    }

    func authOutcome(row: String, outcome: String) {
        update(row) { $0.namedAuthOutcomes[outcome, default: 0] += 1 }
    }

    func authOutcome(row: String, _ outcome: AuthOutcome) {
        update(row) { $0.count(outcome) }
    }

    /// After a reload: rows of hosts no longer configured go (their counts with them).
    func retain(patterns: [String]) {
        let kept = Set(patterns + [Self.otherRow])
        state.withLock { state in state.keepRows(kept) }
    }

    var rows: [String: Row] { state.withLock { $0.rows } }
    /// Newest first.
    var refusals: [Refusal] { state.withLock { $0.refusals.reversed() } }

    /// Per-host series for the Prometheus page.
    func samples() -> [Metrics.Sample] {
        var samples: [Metrics.Sample] = []
        for (host, entry) in rows.sorted(by: { $0.key < $1.key }) {
            let label = "host=\"\(PrometheusLabel.escape(host))\""
            samples.append(("countersign_host_requests_total", "Exchanges answered, per configured host ((other): every unlisted host).", label, Double(entry.requests)))
            for (type, count) in entry.errors.sorted(by: { $0.key < $1.key }) {
                samples.append(("countersign_host_proxy_errors_total", "Responses the proxy made itself, per host and RFC 9209 error type.",
                                "\(label),type=\"\(PrometheusLabel.escape(type))\"", Double(count)))
            }
            if let notAfter = entry.certificateNotAfter {
                samples.append(("countersign_upstream_certificate_expiry_timestamp_seconds",
                                "notAfter of the certificate each host last served (Unix time).", label, Double(notAfter)))
            }
            samples.append(("countersign_upstream_trust_refusals_total", "Upstream TLS connections refused by trust evaluation.", label, Double(entry.trustRefusals)))
            for (outcome, count) in entry.authOutcomes.sorted(by: { $0.key < $1.key }) {
                samples.append(("countersign_auth_outcomes_total", "Exchanges by credential outcome: challenges answered (e.g. digest:answered), placeholders resolved or refused.",
                                "\(label),outcome=\"\(PrometheusLabel.escape(outcome))\"", Double(count)))
            }
        }
        return samples
    }
}

enum PrometheusLabel {
    static func escape(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}
