import CountersignAdmin
import CountersignConfig
import Foundation

/// Every fact `/status` shows, built once per request; the HTML page renders it and
/// `/status.json` encodes it, so the two cannot disagree. Names credentials, policies and
/// certificates, never a secret.
struct StatusReport: Encodable {
    struct Counts: Encodable {
        let clientConnectionsOpen: Int
        let clientConnectionsAccepted: Int
        let tunnelsOpen: Int
        /// Intercepted clients speaking HTTP/2, and their streams in progress.
        let h2ConnectionsOpen: Int
        let h2StreamsOpen: Int
        let upstreamConnects: Int
        let upstreamReuses: Int
    }

    struct Listener: Encodable {
        let address: String
        let mode: String
        let upstream: String?
        let allow: [String]
        let proxyAuth: String
    }

    struct Host: Encodable {
        /// The `hosts` pattern, or `(other)` for every unlisted host together.
        let pattern: String
        let configured: Bool
        let intercept: Bool
        let upstreamTLS: Bool
        let trust: String
        let identity: String?
        let authRules: [String]
        let requests: Int
        /// Responses the proxy made itself, by RFC 9209 error type.
        let errors: [String: Int]
        let authOutcomes: [String: Int]
        let lastTrust: String?
        let trustRefusals: Int
        let servedPins: [String]
        /// Set when the host is intercepted but outside the CA's name constraints.
        let outsideCAConstraints: Bool
        /// What its clients get: `intercept`, `tunnel`, or for `(other)` what `unlisted_hosts`
        /// says (`deny` refuses them).
        let mode: String
    }

    /// A certificate that will expire: what an upstream last served, a client identity,
    /// the interception CA.
    struct CertificateExpiry: Encodable {
        enum Kind: String, Encodable { case served, identity, interceptionCA = "interception-ca", crl }
        enum Level: String, Encodable { case ok, amber, red }

        let kind: Kind
        /// The host pattern, credential name or CA file it belongs to.
        let name: String
        let subject: String
        let notAfter: String
        let daysLeft: Int
        let level: Level

        init(kind: Kind, name: String, subject: String, notAfter: Int64, now: Date) {
            self.kind = kind
            self.name = name
            self.subject = subject
            self.notAfter = Date(timeIntervalSince1970: TimeInterval(notAfter)).ISO8601Format()
            let seconds = Double(notAfter) - now.timeIntervalSince1970
            daysLeft = Int((seconds / 86400).rounded(.down))
            // A CRL lives days, not months, and is republished well before its nextUpdate: one
            // that has under three days left was not refreshed, under one day it is urgent.
            let (red, amber) = kind == .crl ? (86400.0, 3 * 86400.0) : (7 * 86400.0, 30 * 86400.0)
            level = seconds < red ? .red : seconds < amber ? .amber : .ok
        }
    }

    struct InterceptionCA: Encodable {
        let commonName: String
        let certificatePath: String
        let constraints: String
    }

    /// An intercepted host its CA may not sign for: clients will reject the minted leaf.
    struct ConstraintProblem: Encodable {
        let host: String
        /// The command that re-creates the CA for every intercepted host.
        let fix: String
        let note: String
    }

    struct Refusal: Encodable {
        let time: String
        let host: String
        let status: Int
        let errorType: String
        let details: String
    }

    /// A reload that was refused since the running configuration was loaded.
    struct FailedReload: Encodable {
        let time: String
        let reason: String
        /// One sentence with all of it, as the page shows it.
        let message: String
    }

    /// A protection space whose credential is no longer answered, with when and why.
    struct LockedOutSpace: Encodable {
        let protectionSpace: String
        let credential: String
        let since: String
        let reason: String
    }

    let generatedAt: String
    let state: String
    /// Absent unless the last reload failed.
    let lastReloadFailed: FailedReload?
    let configurationGeneration: Int
    let configurationFile: String
    let counts: Counts
    let unlistedHosts: String
    let parentProxy: String?
    let listeners: [Listener]
    let hosts: [Host]
    let certificates: [CertificateExpiry]
    let interceptionCA: InterceptionCA?
    let constraintProblems: [ConstraintProblem]
    let refusals: [Refusal]
    let lockedOutSpaces: [LockedOutSpace]

    func json() -> String {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "{}\n" }
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

extension StatusReport {
    init(snapshot: ConfigSnapshot, rows: [String: Observations.Row], refusals: [Observations.Refusal], metrics: Metrics,
         draining: Bool, lastReload: ReloadOutcome = .current, now: Date = Date()) {
        let configuration = snapshot.configuration
        let ca = snapshot.interception?.ca
        generatedAt = now.ISO8601Format()
        if case .failed(let failure) = lastReload {
            let time = failure.time.ISO8601Format()
            lastReloadFailed = FailedReload(
                time: time, reason: failure.reason,
                message: "last reload failed at \(time): \(failure.reason) (the running configuration is generation \(snapshot.generation) from \(configuration.sourcePath))")
        } else {
            lastReloadFailed = nil
        }
        state = draining ? "draining" : "serving"
        configurationGeneration = snapshot.generation
        configurationFile = configuration.sourcePath
        counts = Counts(clientConnectionsOpen: metrics.connectionsOpen.current, clientConnectionsAccepted: metrics.connectionsAccepted.current,
                        tunnelsOpen: metrics.tunnelsOpen.current, h2ConnectionsOpen: metrics.h2ConnectionsOpen.current,
                        h2StreamsOpen: metrics.h2StreamsOpen.current, upstreamConnects: metrics.upstreamConnects.current,
                        upstreamReuses: metrics.upstreamReuses.current)
        unlistedHosts = configuration.unlistedHosts.rawValue
        parentProxy = configuration.parentProxy.map { "\($0.url)" }
        listeners = configuration.listeners.map { listener in
            Listener(address: "\(listener.address.host):\(listener.address.port)", mode: "\(listener.mode)",
                     upstream: listener.upstream.map { "\($0)" }, allow: listener.allow.map { "\($0)" },
                     proxyAuth: listener.proxyAuth.map { "Basic, \($0.users.count) user(s)" } ?? "off")
        }

        var certificates: [CertificateExpiry] = []
        var problems: [ConstraintProblem] = []
        var hosts: [Host] = []
        for entry in configuration.hosts.entries {
            let seen = rows[entry.pattern] ?? Observations.Row()
            let outside = entry.intercept && ca.map { !$0.permits(host: entry.pattern) } ?? false
            if outside {
                problems.append(ConstraintProblem(
                    host: entry.pattern, fix: "countersign ca init --force -c \(configuration.sourcePath)",
                    note: "re-creates the CA constrained to every intercepted host; Countersign reloads it (reload.watch, else send SIGHUP); then make clients trust the new CA (countersign ca show)"))
            }
            if let identity = snapshot.hostPlans[entry.pattern]?.tls?.identity, let name = entry.identity,
               !certificates.contains(where: { $0.kind == .identity && $0.name == name }) {
                certificates.append(CertificateExpiry(kind: .identity, name: name, subject: identity.certificate.subject, notAfter: identity.notAfter, now: now))
            }
            hosts.append(Host(pattern: entry.pattern, configured: true, intercept: entry.intercept, upstreamTLS: entry.upstreamTLS,
                              trust: Self.policy(entry.trust), identity: entry.identity, authRules: entry.auth.map(Self.rule), seen: seen,
                              outside: outside, mode: Self.mode(entry, outside: outside)))
        }
        if let other = rows[Observations.otherRow] {
            hosts.append(Host(pattern: Observations.otherRow, configured: false, intercept: false, upstreamTLS: false,
                              trust: "system roots, name validation", identity: nil, authRules: [], seen: other, outside: false,
                              mode: Self.unlistedMode(configuration.unlistedHosts)))
        }
        for host in hosts {
            guard let seen = rows[host.pattern], let notAfter = seen.certificateNotAfter else { continue }
            certificates.append(CertificateExpiry(kind: .served, name: seen.certificateUpstream ?? host.pattern,
                                                  subject: seen.certificateSubject ?? "-", notAfter: notAfter, now: now))
        }
        for crl in RevocationListSchedule(snapshot).entries {
            certificates.append(CertificateExpiry(kind: .crl, name: crl.file, subject: crl.issuer,
                                                  notAfter: crl.nextUpdate ?? 0, now: now))
        }
        if let ca {
            certificates.append(CertificateExpiry(kind: .interceptionCA, name: ca.certificatePath, subject: ca.commonName,
                                                  notAfter: Int64(ca.notAfter.timeIntervalSince1970), now: now))
            interceptionCA = InterceptionCA(commonName: ca.commonName, certificatePath: ca.certificatePath,
                                            constraints: ca.nameConstraints.map { "\($0)" } ?? "none (unconstrained)")
        } else {
            interceptionCA = nil
        }
        self.hosts = hosts
        self.certificates = certificates
        constraintProblems = problems
        lockedOutSpaces = snapshot.auth.store.lockOuts().map {
            LockedOutSpace(protectionSpace: "\($0.space)", credential: $0.credentialName, since: $0.since.ISO8601Format(), reason: $0.reason)
        }
        self.refusals = refusals.map {
            Refusal(time: Date(timeIntervalSince1970: TimeInterval($0.time)).ISO8601Format(), host: $0.host, status: $0.status,
                    errorType: $0.type, details: $0.details)
        }
    }

    private static func mode(_ entry: HostConfig, outside: Bool) -> String {
        [entry.intercept ? "intercept" : "tunnel", entry.upstreamTLS ? "upstream TLS" : nil,
         outside ? "outside CA constraints" : nil].compactMap { $0 }.joined(separator: ", ")
    }

    /// The `(other)` row: every unlisted host gets what `unlisted_hosts` says.
    private static func unlistedMode(_ policy: UnlistedHostsPolicy) -> String {
        switch policy {
        case .tunnel: return "tunnel (unlisted_hosts: tunnel; plain requests forwarded untouched)"
        case .deny: return "deny (unlisted_hosts: deny; refused with 403)"
        }
    }

    private static func policy(_ trust: TrustConfig) -> String {
        var policy = "pinning \(trust.pinning.rawValue)"
        if !trust.anchors.isEmpty { policy += ", \(trust.anchors.count) anchor file(s)\(trust.anchorsOnly ? " only" : " + system roots")" }
        if !trust.pins.isEmpty { policy += ", \(trust.pins.count) pin(s)" }
        if !trust.validateDomain { policy += ", no name check" }
        if trust.allowInvalidCertificates { policy += ", allows invalid" }
        if let depth = trust.maxChainDepth { policy += ", at most \(depth) intermediate(s)" }
        if !trust.crlFiles.isEmpty { policy += ", \(trust.crlFiles.count) CRL file(s)" }
        if trust.ocspStapling != .off { policy += ", OCSP stapling \(trust.ocspStapling.rawValue)" }
        return policy
    }

    private static func rule(_ rule: AuthRule) -> String {
        "\(rule.credential): \(rule.schemes.map(\.rawValue).joined(separator: "/"))\(rule.realm.map { " realm \($0)" } ?? ""), \(rule.persistence.rawValue)"
    }
}

private extension StatusReport.Host {
    init(pattern: String, configured: Bool, intercept: Bool, upstreamTLS: Bool, trust: String, identity: String?,
         authRules: [String], seen: Observations.Row, outside: Bool, mode: String) {
        self.init(pattern: pattern, configured: configured, intercept: intercept, upstreamTLS: upstreamTLS, trust: trust,
                  identity: identity, authRules: authRules, requests: seen.requests, errors: seen.errors,
                  authOutcomes: seen.authOutcomes, lastTrust: seen.lastTrust, trustRefusals: seen.trustRefusals,
                  servedPins: seen.servedPins, outsideCAConstraints: outside, mode: mode)
    }
}
