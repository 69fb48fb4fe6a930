import CountersignAdmin
import Synchronization

/// What Countersign has seen of each upstream, for `/metrics` and `/status`: the certificate
/// it last served and how trust went, and how challenge answering went. Keyed by the
/// upstream's `host:port`; shared by every worker behind one lock, touched once per new TLS
/// connection and once per answered exchange.
final class Observations: Sendable {
    static let shared = Observations()

    struct Upstream: Sendable {
        var certificateSubject: String?
        var certificateNotAfter: Int64?
        var servedPins: [String] = []
        var lastTrust: String?
        var trustRefusals = 0
        var authOutcomes: [String: Int] = [:]
    }

    private let upstreams = Mutex<[String: Upstream]>([:])

    func servedCertificate(upstream: String, subject: String, notAfter: Int64, pins: [String]) {
        upstreams.withLock { table in
            var entry = table[upstream] ?? Upstream()
            entry.certificateSubject = subject
            entry.certificateNotAfter = notAfter
            entry.servedPins = pins
            entry.lastTrust = "trusted"
            table[upstream] = entry
        }
    }

    func trustRefused(upstream: String, details: String) {
        upstreams.withLock { table in
            var entry = table[upstream] ?? Upstream()
            entry.lastTrust = "refused: \(details)"
            entry.trustRefusals += 1
            table[upstream] = entry
        }
    }

    func authOutcome(upstream: String, outcome: String) {
        upstreams.withLock { table in
            var entry = table[upstream] ?? Upstream()
            entry.authOutcomes[outcome, default: 0] += 1
            table[upstream] = entry
        }
    }

    var snapshot: [String: Upstream] { upstreams.withLock { $0 } }

    /// Gauges and counters for the Prometheus page.
    func samples() -> [Metrics.Sample] {
        var samples: [Metrics.Sample] = []
        for (upstream, entry) in snapshot.sorted(by: { $0.key < $1.key }) {
            let label = "upstream=\"\(PrometheusLabel.escape(upstream))\""
            if let notAfter = entry.certificateNotAfter {
                samples.append(("countersign_upstream_certificate_expiry_timestamp_seconds",
                                "notAfter of the certificate each upstream last served (Unix time).", label, Double(notAfter)))
            }
            samples.append(("countersign_upstream_trust_refusals_total", "Upstream TLS connections refused by trust evaluation.", label, Double(entry.trustRefusals)))
            for (outcome, count) in entry.authOutcomes.sorted(by: { $0.key < $1.key }) {
                samples.append(("countersign_auth_outcomes_total", "Exchanges by challenge-answering outcome (e.g. digest:answered).",
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
