import CountersignAdmin
import CountersignConfig

/// The `/status` page: what is configured and how it is going, for a person at a browser.
/// It names credentials and policies, never a secret.
enum StatusPage {
    static func render(configuration: Configuration, metrics: Metrics, draining: Bool) -> String {
        var html = """
        <!doctype html>
        <html><head><meta charset="utf-8"><title>Countersign status</title>
        <style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}</style>
        </head><body>
        <h1>Countersign</h1>
        <p>State: <b>\(draining ? "draining" : "serving")</b> ·
        client connections open: \(metrics.connectionsOpen.current) ·
        tunnels open: \(metrics.tunnelsOpen.current) ·
        accepted: \(metrics.connectionsAccepted.current)</p>
        <h2>Listeners</h2><table><tr><th>address</th><th>mode</th><th>upstream</th><th>allow</th><th>proxy auth</th></tr>
        """
        for listener in configuration.listeners {
            html += "<tr><td>\(escape("\(listener.address.host):\(listener.address.port)"))</td><td>\(escape(String(describing: listener.mode)))</td>"
            html += "<td>\(escape(listener.upstream.map { "\($0.scheme)://\($0.host):\($0.port)" } ?? "-"))</td>"
            html += "<td>\(escape(listener.allow.map { "\($0)" }.joined(separator: ", ")))</td>"
            html += "<td>\(listener.proxyAuth == nil ? "off" : "Basic (\(listener.proxyAuth!.users.count) users)")</td></tr>\n"
        }
        html += "</table>\n<h2>Hosts</h2>\n<p>Unlisted hosts: \(escape(String(describing: configuration.unlistedHosts)))</p>\n"
        html += "<table><tr><th>pattern</th><th>intercept</th><th>upstream TLS</th><th>pinning</th><th>identity</th><th>auth rules</th></tr>\n"
        for host in configuration.hosts.entries {
            html += "<tr><td>\(escape(host.pattern))</td><td>\(host.intercept)</td><td>\(host.upstreamTLS)</td>"
            html += "<td>\(escape(String(describing: host.trust.pinning)))</td><td>\(escape(host.identity ?? "-"))</td>"
            html += "<td>\(escape(host.auth.map { "\($0.credential): \($0.schemes.map(\.rawValue).joined(separator: "/"))" }.joined(separator: "; ")))</td></tr>\n"
        }
        html += "</table>\n</body></html>\n"
        return html
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
