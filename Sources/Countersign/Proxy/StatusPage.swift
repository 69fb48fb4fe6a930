import CountersignAdmin
import CountersignConfig
import Foundation

/// The `/status` page: what is configured and how it is going, for a person at a browser.
/// It names credentials and policies, never a secret.
enum StatusPage {
    static func render(snapshot: ConfigSnapshot, observations: [String: Observations.Upstream], metrics: Metrics, draining: Bool) -> String {
        let configuration = snapshot.configuration
        var html = """
        <!doctype html>
        <html><head><meta charset="utf-8"><title>Countersign status</title>
        <style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1.5em}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}.bad{color:#a00}</style>
        </head><body>
        <h1>Countersign</h1>
        <p>State: <b>\(draining ? "draining" : "serving")</b> · configuration generation \(snapshot.generation) ·
        client connections open: \(metrics.connectionsOpen.current) · tunnels open: \(metrics.tunnelsOpen.current) ·
        accepted: \(metrics.connectionsAccepted.current) · upstream connects: \(metrics.upstreamConnects.current), reuses: \(metrics.upstreamReuses.current)</p>
        <h2>Listeners</h2><table><tr><th>address</th><th>mode</th><th>upstream</th><th>allow</th><th>proxy auth</th></tr>

        """
        for listener in configuration.listeners {
            html += row([
                "\(listener.address.host):\(listener.address.port)", "\(listener.mode)",
                listener.upstream.map { "\($0)" } ?? "-", listener.allow.map { "\($0)" }.joined(separator: ", "),
                listener.proxyAuth.map { "Basic, \($0.users.count) user(s)" } ?? "off",
            ])
        }
        html += "</table>\n"
        if let ca = snapshot.interception?.ca {
            html += "<h2>Interception CA</h2><p>\(escape(ca.commonName)) · expires \(date(Int64(ca.notAfter.timeIntervalSince1970))) · "
            html += "constraints: \(escape(ca.nameConstraints.map { "\($0)" } ?? "none (unconstrained)"))</p>\n"
        }
        html += "<h2>Hosts</h2>\n<p>Unlisted hosts: \(escape("\(configuration.unlistedHosts)"))"
        if let parent = configuration.parentProxy { html += " · parent proxy: \(escape("\(parent.url)"))" }
        html += "</p>\n<table><tr><th>pattern</th><th>intercept</th><th>upstream TLS</th><th>trust</th><th>identity</th><th>auth rules</th></tr>\n"
        let identities = snapshot.identityExpiry
        for host in configuration.hosts.entries {
            let trust = host.trust
            var policy = "pinning \(trust.pinning.rawValue)"
            if !trust.anchors.isEmpty { policy += ", \(trust.anchors.count) anchor file(s)\(trust.anchorsOnly ? " only" : " + system roots")" }
            if !trust.pins.isEmpty { policy += ", \(trust.pins.count) pin(s)" }
            if !trust.validateDomain { policy += ", no name check" }
            if trust.allowInvalidCertificates { policy += ", allows invalid" }
            let identity = host.identity.map { name in identities[name].map { "\(name) (expires \(date($0)))" } ?? name } ?? "-"
            let rules = host.auth.map { rule in
                "\(rule.credential): \(rule.schemes.map(\.rawValue).joined(separator: "/"))\(rule.realm.map { " realm \($0)" } ?? ""), \(rule.persistence.rawValue)"
            }.joined(separator: "; ")
            html += row([host.pattern, "\(host.intercept)", "\(host.upstreamTLS)", policy, identity, rules.isEmpty ? "-" : rules])
        }
        html += "</table>\n<h2>Upstreams seen</h2>\n<table><tr><th>upstream</th><th>certificate served</th><th>expires</th><th>trust</th><th>served pins</th><th>auth outcomes</th></tr>\n"
        for (upstream, seen) in observations.sorted(by: { $0.key < $1.key }) {
            html += row([
                upstream, seen.certificateSubject ?? "-", seen.certificateNotAfter.map(date) ?? "-",
                (seen.lastTrust ?? "-") + (seen.trustRefusals > 0 ? " (\(seen.trustRefusals) refused)" : ""),
                seen.servedPins.joined(separator: "\n"),
                seen.authOutcomes.sorted(by: { $0.key < $1.key }).map { "\($0.key) × \($0.value)" }.joined(separator: ", "),
            ])
        }
        html += "</table>\n</body></html>\n"
        return html
    }

    private static func row(_ cells: [String]) -> String {
        "<tr>" + cells.map { "<td>\(escape($0).replacingOccurrences(of: "\n", with: "<br>"))</td>" }.joined() + "</tr>\n"
    }

    private static func date(_ seconds: Int64) -> String {
        Date(timeIntervalSince1970: TimeInterval(seconds)).ISO8601Format()
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
