import Foundation

/// The `/status` page: what is configured and how it is going, for a person at a browser.
/// Renders a `StatusReport` (the facts `/status.json` carries), most urgent first: expiring
/// certificates and name-constraint problems, then per-host counts and the last refusals.
enum StatusPage {
    /// `refresh=N` (1…3600 seconds) in the query adds an auto-refresh.
    static func refreshSeconds(query: String?) -> Int? {
        guard let query else { return nil }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0] == "refresh", let seconds = Int(parts[1]), (1...3600).contains(seconds) { return seconds }
        }
        return nil
    }

    static func render(_ report: StatusReport, refresh: Int?) -> String {
        summary(report, refresh: refresh) + sections(report)
    }

    /// The page down to its summary line: the only part a request's `refresh=N` changes.
    static func summary(_ report: StatusReport, refresh: Int?) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>Countersign status</title>
        \(refresh.map { "<meta http-equiv=\"refresh\" content=\"\($0)\">" } ?? "")
        <style>
        body{font-family:system-ui,sans-serif;margin:1.5em 2em;color:#222}
        table{border-collapse:collapse;margin-bottom:1.5em}
        td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
        th{background:#f3f3f3} td.num{text-align:right}
        tr.level-amber td{background:#fff3cd} tr.level-red td{background:#f8d7da;color:#842029;font-weight:bold}
        .badge{display:inline-block;padding:0 6px;border-radius:3px;font-size:90%}
        .badge.level-ok{background:#d1e7dd}.badge.level-amber{background:#ffe69c}.badge.level-red{background:#dc3545;color:#fff}
        .problem{border-left:4px solid #dc3545;background:#fdf0f1;padding:6px 10px;margin:6px 0}
        .problem pre{white-space:pre-wrap;margin:4px 0}
        code{background:#f3f3f3;padding:1px 4px} .muted{color:#777} td.pins{font-family:monospace;font-size:75%;max-width:18em;word-break:break-all}
        </style>
        </head><body>
        <h1>Countersign</h1>
        <p id="summary">State: <b id="state">\(report.state)</b> · configuration generation \(report.configurationGeneration)
        (\(escape(report.configurationFile))) · client connections open: \(report.counts.clientConnectionsOpen) ·
        tunnels open: \(report.counts.tunnelsOpen) · HTTP/2 connections: \(report.counts.h2ConnectionsOpen),
        streams: \(report.counts.h2StreamsOpen) · accepted: \(report.counts.clientConnectionsAccepted) ·
        upstream connects: \(report.counts.upstreamConnects), reuses: \(report.counts.upstreamReuses) ·
        <span class="muted">generated \(report.generatedAt)\(refresh.map { ", refreshing every \($0) s" } ?? "")</span></p>

        """
    }

    /// The page after its summary line, the bulk of it; the same whatever the query.
    static func sections(_ report: StatusReport) -> String {
        var html = notices(report)
        html += lockedOutSpaces(report)
        html += certificates(report)
        html += constraintProblems(report)
        html += hosts(report)
        html += refusals(report)
        html += listeners(report)
        html += "</body></html>\n"
        return html
    }

    /// What an operator must act on before anything else: the file on disk was refused. The
    /// locked-out protection spaces follow right after it.
    private static func notices(_ report: StatusReport) -> String {
        var notices: [String] = []
        if let failed = report.lastReloadFailed {
            notices.append("<div class=\"problem\" id=\"reload-failed\"><b>Last reload failed</b> at <span class=\"time\">\(failed.time)</span>:"
                + "<pre class=\"reason\">\(escape(failed.reason))</pre>The running configuration is generation \(report.configurationGeneration)"
                + " from <code>\(escape(report.configurationFile))</code>; fix the file (<code>countersign check</code>), then reload.</div>")
        }
        guard !notices.isEmpty else { return "" }
        return "<section id=\"notices\"><h2>Needs attention</h2>\n" + notices.joined(separator: "\n") + "\n</section>\n"
    }

    private static func certificates(_ report: StatusReport) -> String {
        var html = "<section id=\"certificates\"><h2>Certificates and CRLs</h2>\n"
        guard !report.certificates.isEmpty else { return html + "<p class=\"muted\">none configured or served yet</p></section>\n" }
        html += "<table><tr><th>days left</th><th>kind</th><th>for</th><th>subject (CRL: issuer)</th><th>expires (CRL: nextUpdate)</th></tr>\n"
        for certificate in report.certificates.sorted(by: { $0.daysLeft < $1.daysLeft }) {
            let days = certificate.daysLeft < 0 ? "expired" : "\(certificate.daysLeft)"
            html += "<tr class=\"cert level-\(certificate.level.rawValue)\" data-kind=\"\(certificate.kind.rawValue)\" data-name=\"\(escape(certificate.name))\">"
            html += "<td class=\"days num\"><span class=\"badge level-\(certificate.level.rawValue)\">\(days)</span></td>"
            html += cells([certificate.kind.rawValue, certificate.name, certificate.subject, certificate.notAfter]) + "</tr>\n"
        }
        return html + "</table></section>\n"
    }

    private static func constraintProblems(_ report: StatusReport) -> String {
        var html = ""
        if let ca = report.interceptionCA {
            html += "<section id=\"interception-ca\"><h2>Interception CA</h2><p>\(escape(ca.commonName)) · \(escape(ca.certificatePath)) · constraints: \(escape(ca.constraints))</p>\n"
            for problem in report.constraintProblems {
                html += "<div class=\"problem\" data-host=\"\(escape(problem.host))\"><b>\(escape(problem.host))</b> is intercepted but outside the CA's name constraints: clients will reject its certificates. Fix: <code class=\"fix\">\(escape(problem.fix))</code> <span class=\"muted\">(\(escape(problem.note)))</span></div>\n"
            }
            html += "</section>\n"
        }
        return html
    }

    private static func hosts(_ report: StatusReport) -> String {
        var html = "<section id=\"hosts\"><h2>Hosts</h2>\n<p>Unlisted hosts: \(escape(report.unlistedHosts))"
        if let parent = report.parentProxy { html += " · parent proxy: \(escape(parent))" }
        html += "</p>\n<table><tr><th>host</th><th>requests</th><th>proxy errors</th><th>auth outcomes</th><th>trust</th><th>last trust</th><th>served pins</th><th>identity</th><th>auth rules</th><th>mode</th></tr>\n"
        for host in report.hosts {
            html += "<tr class=\"host\(host.outsideCAConstraints ? " level-red" : "")\" data-host=\"\(escape(host.pattern))\">"
            html += "<td class=\"pattern\">\(escape(host.pattern))</td><td class=\"requests num\">\(host.requests)</td>"
            html += "<td class=\"errors\">\(counts(host.errors))</td><td class=\"auth\">\(counts(host.authOutcomes))</td>"
            let lastTrust = (host.lastTrust ?? "-") + (host.trustRefusals > 0 ? " (\(host.trustRefusals) refused)" : "")
            html += cells([host.trust, lastTrust])
            html += "<td class=\"pins\">\(host.servedPins.isEmpty ? "-" : host.servedPins.map(escape).joined(separator: "<br>"))</td>"
            html += cells([host.identity ?? "-", host.authRules.isEmpty ? "-" : host.authRules.joined(separator: "\n")])
            html += "<td class=\"mode\">\(escape(host.mode))</td>"
            html += "</tr>\n"
        }
        return html + "</table></section>\n"
    }

    /// Urgent: these spaces get no answer until a reload or a credential change.
    private static func lockedOutSpaces(_ report: StatusReport) -> String {
        guard !report.lockedOutSpaces.isEmpty else { return "" }
        var html = "<section id=\"locked-out\"><h2>Locked-out protection spaces</h2>\n"
        html += "<table><tr><th>protection space</th><th>credential</th><th>since</th><th>why</th></tr>\n"
        for space in report.lockedOutSpaces {
            html += "<tr class=\"locked-out level-red\"><td class=\"space\">\(escape(space.protectionSpace))</td><td class=\"credential\">\(escape(space.credential))</td>"
            html += "<td class=\"time\">\(space.since)</td><td class=\"details\">\(escape(space.reason))</td></tr>\n"
        }
        return html + "</table><p>Not answered until the configuration reloads (SIGHUP) or the credential changes.</p></section>\n"
    }

    private static func refusals(_ report: StatusReport) -> String {
        var html = "<section id=\"refusals\"><h2>Last refusals</h2>\n"
        guard !report.refusals.isEmpty else { return html + "<p class=\"muted\">none since start</p></section>\n" }
        html += "<table><tr><th>time</th><th>host</th><th>status</th><th>error type</th><th>details</th></tr>\n"
        for refusal in report.refusals {
            html += "<tr class=\"refusal\"><td class=\"time\">\(refusal.time)</td><td class=\"host\">\(escape(refusal.host))</td>"
            html += "<td class=\"status num\">\(refusal.status)</td><td class=\"type\">\(escape(refusal.errorType))</td><td class=\"details\">\(escape(refusal.details))</td></tr>\n"
        }
        return html + "</table></section>\n"
    }

    private static func listeners(_ report: StatusReport) -> String {
        var html = "<section id=\"listeners\"><h2>Listeners</h2><table><tr><th>address</th><th>mode</th><th>upstream</th><th>allow</th><th>proxy auth</th></tr>\n"
        for listener in report.listeners {
            html += "<tr>" + cells([listener.address, listener.mode, listener.upstream ?? "-", listener.allow.joined(separator: ", "), listener.proxyAuth]) + "</tr>\n"
        }
        return html + "</table></section>\n"
    }

    /// `type × n` lines, most frequent first.
    private static func counts(_ counts: [String: Int]) -> String {
        guard !counts.isEmpty else { return "-" }
        return counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .map { "<span class=\"count\" data-key=\"\(escape($0.key))\" data-count=\"\($0.value)\">\(escape($0.key)) × \($0.value)</span>" }
            .joined(separator: "<br>")
    }

    private static func cells(_ values: [String]) -> String {
        values.map { "<td>\(escape($0).replacingOccurrences(of: "\n", with: "<br>"))</td>" }.joined()
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
