/// The text `countersign pin` prints: each served certificate with its pin and fingerprint,
/// whether the chain and name validate, and a `hosts` entry ready to paste into the config.
public struct PinReport: Sendable {
    public let result: ServedChainProbe.Result
    /// Given on the command line: written into the snippet.
    public let explicitServerName: String?
    public let anchorsPath: String?

    public init(result: ServedChainProbe.Result, explicitServerName: String?, anchorsPath: String?) {
        self.result = result
        self.explicitServerName = explicitServerName
        self.anchorsPath = anchorsPath
    }

    public var text: String {
        var lines = ["Served chain of \(result.target.configKey) (server name \(result.serverName), \(result.protocolVersion))", ""]
        let path = pinnable
        for (index, certificate) in result.served.enumerated() {
            lines.append("[\(index)] subject:     \(certificate.subject)")
            lines.append("    issuer:      \(certificate.issuer)")
            lines.append("    not after:   \(UTCTimestamp.string(certificate.notAfter))")
            lines.append("    SPKI pin:    \(PublicKeyPin(of: certificate))")
            lines.append("    SHA-256:     \(Self.fingerprint(certificate.sha256))")
            if !path.contains(where: { $0.sha256 == certificate.sha256 }) {
                lines.append("    note:        not on the verified path: a pin of it would never match")
            }
            lines.append("")
        }
        lines.append("Chain: " + chainVerdict)
        lines.append("Name:  " + nameVerdict)
        lines.append("")
        let issuerRole = pinnable.count > 1 ? Self.role(of: pinnable[1], at: 1, in: pinnable) : nil
        lines.append("Config snippet (pins of the leaf\(issuerRole.map { " and its issuer, the \($0)" } ?? ""); keep a backup pin for rotation):")
        lines.append(snippet)
        return lines.joined(separator: "\n") + "\n"
    }

    /// Whether the chain validated and the name matched, i.e. the usual checks can stay on.
    var chainValidates: Bool {
        guard case .verified? = result.facts.chainResults[result.storeLabel] else { return false }
        if case .matched = result.facts.nameMatch { return true }
        return false
    }

    var chainVerdict: String {
        switch result.facts.chainResults[result.storeLabel] {
        case .verified?: return "validates against the \(result.storeLabel)"
        case .failed(let failure)?: return "does NOT validate against the \(result.storeLabel): \(failure.details)"
        case nil: return "not verified"
        }
    }

    var nameVerdict: String {
        switch result.facts.nameMatch {
        case .matched: return "certificate matches \(result.serverName)"
        case .mismatch: return NameCheck().refusal(for: result.facts)?.details ?? "name mismatch"
        }
    }

    /// What the snippet's policy would match pins against (SPEC "verified path"): the chain
    /// built to the anchors when it validates, else (allow-invalid) the signed served prefix.
    /// A certificate the server merely appended is never offered as a pin.
    var pinnable: [CertificateSummary] {
        chainValidates ? result.facts.verifiedPath(storeLabel: result.storeLabel) : result.facts.signedPath
    }

    /// JSON5 for the `hosts` object, pinning the keys of the verified path's leaf and issuer.
    var snippet: String {
        let pinned = Array(pinnable.prefix(2))
        var lines = ["hosts: {", "  \"\(result.target.configKey)\": {", "    trust: {"]
        if let anchorsPath { lines.append("      anchors: [\(Self.quoted(anchorsPath))],") }
        if !chainValidates {
            // A chain that does not validate (self-signed, expired, private CA) can only be
            // trusted through its pins: the chain and name checks are off, the pin check stays.
            lines.append("      // the served chain does not validate: trust rests on the pins alone")
            lines.append("      allow_invalid_certificates: true,")
        }
        lines.append("      pinning: \"public-key\",")
        lines.append("      pins: [")
        for (index, certificate) in pinned.enumerated() {
            let role = Self.role(of: certificate, at: index, in: pinnable)
            lines.append("        \"\(certificate.pin)\",  // \(role) \(certificate.subject)")
        }
        lines.append("      ],")
        if let explicitServerName { lines.append("      server_name: \(Self.quoted(explicitServerName)),") }
        lines += ["    },", "  },", "},"]
        return lines.joined(separator: "\n")
    }

    /// What a certificate of a path (leaf first) is: the last of a path that names itself
    /// as its issuer is the root; one between is an intermediate.
    static func role(of certificate: CertificateSummary, at index: Int, in path: [CertificateSummary]) -> String {
        if index == 0 { return path.count == 1 && certificate.subject == certificate.issuer ? "self-signed leaf" : "leaf" }
        return index == path.count - 1 && certificate.subject == certificate.issuer ? "root" : "intermediate"
    }

    static func fingerprint(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF")
        return bytes.map { "\(digits[Int($0 >> 4)])\(digits[Int($0 & 0x0f)])" }.joined(separator: ":")
    }

    static func quoted(_ text: String) -> String {
        var quoted = "\""
        for character in text {
            if character == "\\" || character == "\"" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "\""
    }
}
