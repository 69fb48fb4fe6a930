/// What `countersign check --host --chain` prints: the chain as a server would send it, each
/// check of the host's policy with why it passes or refuses, what the policy does not check,
/// and the verdict. The verdict is `TrustPolicy.assess`, the evaluation the handshake runs.
public struct ChainVerdictReport {
    public let policy: TrustPolicy
    public let served: [Certificate]
    public let time: Int64
    public let assessment: TrustAssessment
    /// With `ocsp_stapling`: the staple given (`--ocsp-response`) or its absence, judged as the
    /// handshake would after the chain; nil when the policy does not ask for one.
    public let staple: (finding: StapleFinding, refusal: TrustRefusal?)?

    public init(policy: TrustPolicy, served: [Certificate], serverName: String, at time: Int64, ocspResponse: [UInt8]? = nil) {
        self.policy = policy
        self.served = served
        self.time = time
        assessment = policy.assess(served: served, serverName: serverName, at: time)
        staple = policy.settings.ocspStapling == .off || !assessment.decision.isTrusted ? nil
            : StapleCheck(mode: policy.settings.ocspStapling).judge(response: ocspResponse, chain: assessment.facts.verifiedChain, at: time)
    }

    /// The chain's decision, then the staple's (which the handshake judges after the chain).
    public var decision: TrustDecision {
        if assessment.decision.isTrusted, let refusal = staple?.refusal { return .refused(refusal) }
        return assessment.decision
    }

    public var accepted: Bool { decision.isTrusted }

    public var text: String {
        let facts = assessment.facts
        let path = facts.verifiedPath(storeLabel: policy.chainStore?.label)
        var lines = ["server name:  \(facts.serverName)", "evaluated at: \(UTCTimestamp.string(time))", "",
                     "chain (leaf first):"]
        for (index, certificate) in served.enumerated() {
            lines.append("  [\(index)] \(certificate.subject)")
            lines.append("      issuer:    \(certificate.issuer)")
            lines.append("      valid:     \(UTCTimestamp.string(certificate.notBefore)) to \(UTCTimestamp.string(certificate.notAfter))"
                + validity(certificate))
            let placement = path.isEmpty ? ""
                : path.contains { $0.sha256 == certificate.sha256 } ? "  (on the verified path)"
                : "  (NOT on the verified path: cannot satisfy a pin)"
            lines.append("      SPKI pin:  \(PublicKeyPin(of: certificate))\(placement)")
        }
        lines += ["", "checks:"]
        let settings = policy.settings
        if settings.allowInvalidCertificates {
            lines.append("  chain: not checked (allow_invalid_certificates); the verified path is the leaf and the"
                + " served certificates that each signed the one before")
        }
        for check in policy.checks {
            if let refusal = check.refusal(for: facts) {
                lines.append("  \(check.name): REFUSED: \(refusal.details)")
            } else {
                lines.append("  \(check.name): ok: \(check.acceptance(for: facts))")
            }
        }
        if !policy.checks.contains(where: { $0 is NameCheck }) {
            lines.append("  name: not checked (" + (settings.allowInvalidCertificates ? "allow_invalid_certificates)" : "validate_domain is false)"))
        }
        if settings.pinning == .none { lines.append("  pins: none (pinning \"none\")") }
        if let staple {
            let outcome = staple.refusal.map { "REFUSED: \($0.details)" } ?? "ok: \(staple.finding)"
            lines.append("  stapled OCSP (\(settings.ocspStapling.rawValue)): \(outcome)")
        }
        lines.append("")
        switch decision {
        case .trusted: lines.append("verdict: ACCEPTED")
        case .refused(let refusal): lines.append("verdict: REFUSED: \(refusal.details)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private func validity(_ certificate: Certificate) -> String {
        if certificate.notAfter < time { return "  (EXPIRED at \(UTCTimestamp.string(time)))" }
        if certificate.notBefore > time { return "  (NOT YET VALID at \(UTCTimestamp.string(time)))" }
        return ""
    }
}
