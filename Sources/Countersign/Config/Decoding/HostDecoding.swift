/// Decodes `hosts.<pattern>`: the entry, its trust policy and its auth rules.
struct HostDecoding {
    let context: DecodingContext
    let references: CredentialReferences

    func decode(_ member: JSON5Member, at path: KeyPath) -> HostConfig? {
        let pattern: HostPattern
        do {
            pattern = try HostPattern(parsing: member.key)
        } catch {
            context.fail(path, at: member.keyPosition, "\(error)")
            return nil
        }
        let keys = ["intercept", "upstream_tls", "http2", "trust", "identity", "auth", "inject", "placeholders", "sign", "verify_responses"]
        guard let reader = ObjectReader(member.value, at: path, context: context, keys: keys) else { return nil }
        let trust = reader.node("trust").map { self.trust($0, at: reader.keyPath("trust"), pattern: pattern) } ?? TrustConfig()
        let identity = reader.text("identity")
        if let identity, let node = reader.node("identity") {
            references.checkIdentity(identity, at: reader.keyPath("identity"), position: node.position)
        }
        var rules: [AuthRule] = []
        var catchAll: (rule: AuthRule, path: KeyPath)?
        for (node, rulePath) in reader.array("auth") ?? [] {
            guard let rule = authRule(node, at: rulePath) else { continue }
            // First match wins: a rule whose schemes a realm-less rule before it already covers is dead.
            if let catchAll, Set(rule.schemes).isSubset(of: catchAll.rule.schemes) {
                context.fail(rulePath, at: node.position, "is never used: \(catchAll.path) has no realm and already answers its schemes; give \(catchAll.path) a realm or move this rule before it")
                continue
            }
            if rule.realm == nil && catchAll == nil { catchAll = (rule, rulePath) }
            rules.append(rule)
        }
        let injection = InjectionDecoding(context: context, references: references)
        let inject = injection.rules(in: reader)
        let placeholders = injection.placeholders(in: reader)
        let signing = SigningDecoding(context: context, references: references)
        // One `sign` key, two formats with keys of their own.
        let signNode = reader.node("sign")
        let aws = signNode.map(SigningDecoding.isAWSFormat) ?? false
        let sign = aws ? nil : signNode.map { signing.sign($0, at: reader.keyPath("sign")) }
        let awsSign = aws ? signNode.map { signing.awsSign($0, at: reader.keyPath("sign")) } : nil
        let verify = reader.node("verify_responses").map { signing.verify($0, at: reader.keyPath("verify_responses")) }
        // An AWS request's Authorization is its signature: nothing else may write it.
        if aws, !rules.isEmpty {
            reader.fail("auth", "cannot answer challenges on an aws-sigv4 host: its Authorization header is the SigV4 signature; remove auth, or sign with rfc9421")
        }
        // A header another stage of this host writes cannot also be injected: one of the two
        // would silently undo the other (an injected Authorization switching challenge answers
        // off, or replacing a signature).
        let writtenElsewhere = Self.headersWrittenByOtherStages(answersChallenges: !rules.isEmpty, aws: aws)
        for rule in inject ?? [] {
            guard case .header(let name, _) = rule.placement, let writer = writtenElsewhere[name.lowercased()] else { continue }
            reader.fail("inject", "injects \(name) (credential \(rule.credential)), which \(writer) also writes on this host; inject another header, or remove the other")
        }
        guard let trust, let inject, let placeholders, sign ?? .some(nil) != nil, awsSign ?? .some(nil) != nil,
              verify ?? .some(nil) != nil else { return nil }
        return HostConfig(pattern: member.key, intercept: reader.bool("intercept") ?? true,
                          upstreamTLS: reader.bool("upstream_tls") ?? false, http2: reader.bool("http2") ?? true, trust: trust,
                          identity: identity, auth: rules, inject: inject, placeholders: placeholders,
                          sign: sign ?? nil, awsSign: awsSign ?? nil, verifyResponses: verify ?? nil)
    }

    /// The request header fields a host's own stages set, by lower-case name, with what sets them
    /// (RFC 9421's fields are never injectable: `InjectionDecoding.reservedHeaders`).
    static func headersWrittenByOtherStages(answersChallenges: Bool, aws: Bool) -> [String: String] {
        var written: [String: String] = [:]
        if answersChallenges { written["authorization"] = "its auth rules (answering a 401)" }
        if aws {
            for name in ["authorization", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token"] {
                written[name] = "its aws-sigv4 signing (the SigV4 signature)"
            }
        }
        return written
    }

    // MARK: - Trust

    /// Also decodes `parent_proxy.trust` (with the parent's host as `pattern`).
    func trust(_ node: JSON5Node, at path: KeyPath, pattern: HostPattern) -> TrustConfig? {
        let keys = ["anchors", "anchors_only", "pinning", "pins", "pinned_certificates", "validate_domain",
                    "allow_invalid_certificates", "server_name", "min_tls_version", "max_chain_depth", "revocation"]
        guard let reader = ObjectReader(node, at: path, context: context, keys: keys) else { return nil }
        let errorsBefore = context.errors.count
        let anchors = reader.existingFiles("anchors") ?? []
        let pinning = reader.choice("pinning", of: PinningMode.self) ?? .none
        let pins = reader.parsedArray("pins", PinParser.sha256(from:)) ?? []
        let pinned = reader.existingFiles("pinned_certificates") ?? []
        let validateDomain = reader.bool("validate_domain") ?? true
        let allowInvalid = reader.bool("allow_invalid_certificates") ?? false
        let anchorsOnly = reader.bool("anchors_only")
        let serverName = reader.parsed("server_name") { text -> String in
            guard HostName.isValidDNSName(text) || IPAddress(text) != nil else {
                throw ValueError("\"\(text)\" is not a host name")
            }
            return text.lowercased()
        }
        let minTLS = minTLSVersion(reader)
        let maxChainDepth = reader.int("max_chain_depth", minimum: 0, meaning: "it counts intermediates (0: the leaf is issued by the anchor itself)")
        var revocation: (crlFiles: [String], ocspStapling: OCSPStaplingMode)?
        if let node = reader.node("revocation") { revocation = revocationSettings(node, at: reader.keyPath("revocation")) }
        if revocation != nil && allowInvalid {
            reader.fail("revocation", "revocation needs a verified path (a CRL or OCSP response is checked against the issuer chain validation found), and allow_invalid_certificates skips it; remove one of them")
        }

        // Whether pins were written at all, even if some were bad, so one bad pin is one error.
        let hasPins = reader.isNonEmptyArray("pins")
        let hasPinned = reader.isNonEmptyArray("pinned_certificates")
        switch pinning {
        case .none where hasPins || hasPinned:
            reader.fail(hasPins ? "pins" : "pinned_certificates",
                        "pins take effect only with pinning \"public-key\" (or pinned_certificates with \"certificate\"); set pinning, or remove them")
        case .publicKey where !hasPins && !hasPinned:
            reader.fail("pinning", "pinning \"public-key\" needs pins (sha256//...) or pinned_certificates to take the keys from; `countersign pin \(pattern.host)` prints them")
        case .certificate where !hasPinned:
            reader.fail("pinning", "pinning \"certificate\" needs pinned_certificates (PEM files of the certificates to accept)")
        case .certificate where hasPins:
            reader.fail("pins", "pins are public-key hashes and are not used with pinning \"certificate\"; use pinning \"public-key\", or list the certificates under pinned_certificates")
        default:
            break
        }
        if validateDomain && allowInvalid && !hasPins && !hasPinned {
            reader.fail("allow_invalid_certificates", "allow_invalid_certificates with validate_domain checks a name nothing vouches for; add pins, or set validate_domain: false to accept any certificate (for labs only)")
        }
        if anchorsOnly == true && !reader.has("anchors") && pinning != .certificate {
            reader.fail("anchors_only", "anchors_only: true needs anchors; add anchors: [\"certs/ca.pem\"] or remove anchors_only")
        }
        if case .array(let list)? = reader.node("anchors")?.value, list.isEmpty {
            reader.fail("anchors", "an empty list trusts nothing; list PEM files, or remove anchors to use the system roots")
        }
        guard context.errors.count == errorsBefore else { return nil }
        return TrustConfig(anchors: anchors, anchorsOnly: anchorsOnly, pinning: pinning, pins: pins,
                           pinnedCertificates: pinned, validateDomain: validateDomain,
                           allowInvalidCertificates: allowInvalid, serverName: serverName,
                           minTLSVersion: minTLS ?? .v1_2, maxChainDepth: maxChainDepth,
                           crlFiles: revocation?.crlFiles ?? [], ocspStapling: revocation?.ocspStapling ?? .off)
    }

    /// `trust.revocation`: `crl_files` (existing files, watched for reload) and `ocsp_stapling`.
    private func revocationSettings(_ node: JSON5Node, at path: KeyPath) -> (crlFiles: [String], ocspStapling: OCSPStaplingMode)? {
        guard let reader = ObjectReader(node, at: path, context: context, keys: ["crl_files", "ocsp_stapling"]) else { return nil }
        if case .array(let list)? = reader.node("crl_files")?.value, list.isEmpty {
            reader.fail("crl_files", "an empty list checks nothing; list CRL files (PEM or DER), or remove crl_files")
        }
        return (reader.existingFiles("crl_files") ?? [], reader.choice("ocsp_stapling", of: OCSPStaplingMode.self) ?? .off)
    }

    /// Accepts "1.2" / "1.3"; a bare number is refused with the quoted form, since 1.2 as a
    /// number reads fine but "1.20" or 1.3000001 would not mean what they look like.
    private func minTLSVersion(_ reader: ObjectReader) -> TLSVersion? {
        guard let node = reader.node("min_tls_version") else { return nil }
        if case .number = node.value {
            reader.fail("min_tls_version", "write the version as a string: \"1.2\" or \"1.3\"")
            return nil
        }
        return reader.choice("min_tls_version", of: TLSVersion.self)
    }

    // MARK: - Auth rules

    private func authRule(_ node: JSON5Node, at path: KeyPath) -> AuthRule? {
        let keys = ["credential", "schemes", "realm", "persistence", "preemptive", "max_failures", "allow_plaintext", "spn"]
        guard let reader = ObjectReader(node, at: path, context: context, keys: keys) else { return nil }
        let errorsBefore = context.errors.count
        var credential: ReferencedCredential?
        let name = reader.required("credential", hint: "add credential: \"<a name under credentials>\"") != nil
            ? reader.text("credential") : nil
        if let name, let node = reader.node("credential") {
            credential = references.answering(name, at: reader.keyPath("credential"), position: node.position)
        }
        let schemes = references.schemes(in: reader, for: credential, named: name)
        // Basic and Bearer put the password or token into a header: one that could split it is refused.
        if let schemes, !Set(schemes).isDisjoint(with: [.basic, .bearer]), let secret = credential?.credential?.injectableSecret,
           let problem = HeaderSafety.problem(in: secret), let name {
            reader.fail("credential", "the secret of \"\(name)\" (from \(secret.source)) \(problem), and Basic or Bearer would carry it in a header; fix the secret")
        }
        let persistence = reader.choice("persistence", of: Persistence.self) ?? .session
        let preemptive = reader.bool("preemptive")
        if preemptive == true && persistence == .none {
            reader.fail("preemptive", "preemptive answers need remembered state, and persistence \"none\" remembers nothing; set persistence \"session\" or remove preemptive")
        }
        let maxFailures = reader.int("max_failures", minimum: 1, meaning: "at least one answer must be allowed to fail before giving up")
        let realm = reader.string("realm")
        let allowPlaintext = reader.bool("allow_plaintext") ?? false
        let spn = reader.parsed("spn", ServiceName.validate)
        if spn != nil, let schemes, !schemes.contains(.negotiate) {
            reader.fail("spn", "spn is the service Negotiate asks a Kerberos ticket for, and this rule answers no negotiate; add \"negotiate\" to schemes (with a credential that has kerberos) or remove spn")
        }
        guard context.errors.count == errorsBefore, let name, let schemes else { return nil }
        return AuthRule(credential: name, schemes: schemes, realm: realm, persistence: persistence,
                        preemptive: preemptive, maxFailures: maxFailures ?? 1, allowPlaintext: allowPlaintext, spn: spn)
    }
}

/// `spn`: "HTTP@host" (a host-based service, as GSSAPI names it) or a principal "HTTP/host@REALM".
enum ServiceName {
    static func validate(_ text: String) throws -> String {
        guard !text.isEmpty, !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f }) else {
            throw ValueError("\"\(text)\" is not a service name; write \"HTTP@host.example.com\" or \"HTTP/host.example.com@REALM\"")
        }
        guard let at = text.lastIndex(of: "@"), at != text.startIndex, text.index(after: at) != text.endIndex else {
            throw ValueError("\"\(text)\" names no host; write \"HTTP@host.example.com\" (or the principal \"HTTP/host.example.com@REALM\")")
        }
        return text
    }
}
