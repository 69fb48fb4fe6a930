import CountersignTrust

/// Runs one limbo testcase through the proxy's own evaluator: the trusted certificates become
/// a host's `trust.anchors` with `anchors_only`, the peer certificate and the untrusted
/// intermediates are the chain a server sends (leaf first), the expected peer name is the
/// `server_name` validated with `validate_domain`, and the validation time is the time of
/// the handshake. Cases about things a TLS server-authenticating proxy never decides are
/// skipped with the reason.
enum LimboEvaluation {
    static func evaluate(_ testcase: LimboTestcase, now: Int64) -> LimboResult {
        if let reason = unsupported(testcase) {
            return LimboResult(id: testcase.id, actual_result: .skipped, context: reason)
        }
        guard let time = testcase.validation_time.map(RFC3339.seconds) ?? now else {
            return LimboResult(id: testcase.id, actual_result: .skipped,
                               context: "unreadable validation_time \(testcase.validation_time ?? "")")
        }
        switch decide(testcase, at: time) {
        case .trusted:
            return LimboResult(id: testcase.id, actual_result: .success, context: nil)
        case .refused(let reason):
            return LimboResult(id: testcase.id, actual_result: .failure, context: reason)
        }
    }

    private enum Verdict {
        case trusted
        case refused(String)
    }

    private static func decide(_ testcase: LimboTestcase, at time: Int64) -> Verdict {
        let anchors: [Certificate]
        let served: [Certificate]
        do {
            anchors = try testcase.trusted_certs.map { try Certificate(pem: $0) }
        } catch {
            return .refused("a trusted certificate cannot be loaded as an anchor: \(error)")
        }
        do {
            served = try ([testcase.peer_certificate] + testcase.untrusted_intermediates).map { try Certificate(pem: $0) }
        } catch {
            // OpenSSL would fail the handshake on a certificate it cannot parse.
            return .refused("a served certificate does not parse: \(error)")
        }
        // A CRL Countersign refuses to load (critical or missing cRLNumber, ...) is a configuration
        // error naming the file: the proxy would not start (or reload) with it, so nothing is trusted.
        let crls: [CertificateRevocationList]
        do {
            crls = try (testcase.crls ?? []).flatMap { try CertificateRevocationList.parse(Array($0.utf8), source: "limbo CRL") }
        } catch {
            return .refused("a CRL cannot be used: \(error)")
        }
        // Without anchors a policy would fall back to the system roots; limbo means "trust nothing".
        guard !anchors.isEmpty else { return .refused("no trusted certificates") }
        let peerName = testcase.expected_peer_name
        let settings = TrustSettings(anchorsOnly: true, validateDomain: peerName != nil,
                                     maxChainDepth: testcase.max_chain_depth)
        let policy: TrustPolicy
        do {
            policy = try TrustPolicy(settings: settings, material: TrustMaterial(anchors: anchors, crls: crls))
        } catch {
            return .refused("the trusted certificates do not make a policy: \(error)")
        }
        let facts = policy.gatherFacts(served: served, serverName: peerName?.value ?? "", at: time)
        switch policy.evaluate(facts) {
        case .trusted:
            return .trusted
        case .refused(let refusal):
            return .refused("\(refusal.kind.rawValue): \(refusal.details)")
        }
    }

    /// Why the proxy's policy has nothing to say about `testcase`, or nil when it does.
    static func unsupported(_ testcase: LimboTestcase) -> String? {
        if testcase.validation_kind != "SERVER" {
            return "client-certificate validation: the proxy validates TLS servers only"
        }
        if let kind = testcase.expected_peer_name?.kind, kind != "DNS" && kind != "IP" {
            return "\(kind) peer name: the proxy validates DNS names and IP addresses only"
        }
        if !(testcase.expected_peer_names ?? []).isEmpty {
            return "several expected peer names: the proxy validates one server name"
        }
        if !(testcase.signature_algorithms ?? []).isEmpty {
            return "signature_algorithms: the policy has no configurable signature algorithms"
        }
        let ekus = testcase.extended_key_usage ?? []
        if ekus.contains(where: { $0 != "serverAuth" }) {
            return "extended key usage \(ekus.joined(separator: ", ")): the proxy requires serverAuth only"
        }
        // A TLS server's key signs the handshake: digitalSignature is what the proxy implies.
        let usages = testcase.key_usage ?? []
        if usages.contains(where: { $0 != "digitalSignature" }) {
            return "key usage \(usages.joined(separator: ", ")): the proxy implies digitalSignature only"
        }
        return nil
    }
}
