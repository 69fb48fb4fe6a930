extension Configuration {
    /// What `countersign check` prints: listeners, hosts and their policies, credentials by
    /// name and kind, limits. Secrets appear only as where they come from, never as values.
    public func summary() -> String {
        var lines = ["configuration \(sourcePath)", "listeners:"]
        for listener in listeners {
            var line = "  \(listener.address) \(listener.mode.rawValue)"
            if let upstream = listener.upstream { line += " -> \(upstream)" }
            line += ", clients " + listener.allow.map(\.description).joined(separator: " ")
            if let proxyAuth = listener.proxyAuth {
                line += ", proxy auth (realm \"\(proxyAuth.realm)\", users " + proxyAuth.users.keys.sorted().joined(separator: " ") + ")"
            }
            lines.append(line)
        }
        if let admin { lines.append("admin: \(admin.address), clients " + admin.allow.map(\.description).joined(separator: " ")) }
        lines.append("workers: \(workers)")
        lines.append("unlisted hosts: \(unlistedHosts.rawValue)")
        if let interception {
            lines.append("interception CA: \(interception.caCertificatePath) (key \(interception.caKeyPath))")
        }
        if let parentProxy {
            var line = "parent proxy: \(parentProxy.url)"
            if let auth = parentProxy.auth {
                line += " with \(auth.credential) (" + auth.schemes.map(\.rawValue).joined(separator: ", ") + ")"
                    + (auth.allowPlaintext ? ", plaintext allowed" : "")
            }
            if let identity = parentProxy.identity { line += ", identity \(identity)" }
            lines.append(line)
        }
        lines.append("state dir: \(stateDir)")
        lines.append("credentials:")
        if credentials.isEmpty { lines.append("  (none)") }
        for name in credentials.keys.sorted() {
            lines.append("  \(name): \(credentials[name]!.summary)")
        }
        lines.append("hosts:")
        if hosts.isEmpty { lines.append("  (none: every host is handled as unlisted)") }
        for host in hosts.entries { lines += host.summaryLines.map { "  " + $0 } }
        lines.append("limits: max_connections \(limits.maxConnections), max_header_bytes \(limits.maxHeaderBytes), "
            + "replay_body_bytes \(limits.replayBodyBytes), signed_body_bytes \(limits.signedBodyBytes), held_bodies_bytes \(limits.heldBodiesBytes), connect \(seconds(limits.connectTimeout)), "
            + "header \(seconds(limits.headerTimeout)), idle \(seconds(limits.idleTimeout)), "
            + "tunnel idle \(seconds(limits.tunnelIdleTimeout)), half-close \(seconds(limits.halfCloseTimeout)), drain \(seconds(limits.drainTimeout)) (quiet \(seconds(limits.drainQuietPeriod)))")
        lines.append("log: \(log.level.name), \(log.format == .json ? "json" : "text"), access \(log.access ? "on" : "off")")
        return lines.joined(separator: "\n")
    }

    private func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value))s" : "\(value)s"
    }
}

extension CredentialConfig {
    /// Kind and secret sources, never values.
    var summary: String {
        switch self {
        case .password(let user, let password, let workstation):
            return "password for \(user) from \(password.source)" + (workstation.map { ", workstation \($0)" } ?? "")
        case .ntHash(let user, let hash, let workstation):
            return "NT hash for \(user) from \(hash.source)" + (workstation.map { ", workstation \($0)" } ?? "")
        case .token(let token):
            return "token from \(token.source)"
        case .value(let value):
            return "value from \(value.source)"
        case .signing(let key):
            switch key.source {
            case .hmac(let secret): return "signing key \(key.keyID): HMAC secret from \(secret.source)"
            case .privateKey(let path, _): return "signing key \(key.keyID): \(path)"
            }
        case .aws(.webIdentity(let identity)):
            return "AWS web identity: role \(identity.roleARN) with the token in \(identity.tokenFile), STS at \(identity.stsEndpoint), session \(identity.sessionName)"
        case .aws(.keys(let keys)):
            return "AWS keys: access key id from \(keys.accessKeyID.source), secret from \(keys.secretAccessKey.source)"
                + (keys.sessionToken.map { ", session token from \($0.source)" } ?? "")
        case .verifying(let key):
            switch key.source {
            case .hmac(let secret): return "verifying key \(key.keyID): HMAC secret from \(secret.source)"
            case .publicKey(let path): return "verifying key \(key.keyID): \(path)"
            }
        case .oauth2(let oauth):
            return "OAuth2 client \(oauth.clientID) at \(oauth.tokenURL), secret from \(oauth.clientSecret.source)"
                + (oauth.scope.map { ", scope \($0)" } ?? "")
        case .kerberos(let settings, let alongside):
            return "Kerberos \(settings.principal) from \(settings.sourceSummary)"
                + (settings.krb5Conf.map { ", krb5.conf \($0)" } ?? "")
                + (alongside.map { "; \($0.summary)" } ?? "")
        case .pemIdentity(let certificate, let key, let passphrase):
            return "PEM identity \(certificate) (key \(key))" + (passphrase.map { ", passphrase from \($0.source)" } ?? "")
        case .pkcs12Identity(let path, let passphrase):
            return "PKCS#12 identity \(path)" + (passphrase.map { ", passphrase from \($0.source)" } ?? "")
        }
    }
}

extension KerberosConfig {
    var sourceSummary: String {
        switch source {
        case .keytab(let path): return "keytab \(path)"
        case .password(let secret): return "password from \(secret.source)"
        case .ccache(let name): return "credential cache \(name)"
        }
    }
}

extension HostConfig {
    var summaryLines: [String] {
        var lines = ["\(pattern): " + (intercept ? "intercept" : "tunnel") + (upstreamTLS ? ", upstream TLS" : "")]
        var trustLine = "  trust: " + (trust.anchors.isEmpty ? "system roots" : "anchors " + trust.anchors.joined(separator: " "))
        if !trust.anchors.isEmpty && !trust.anchorsOnly { trustLine += " + system roots" }
        trustLine += ", pinning \(trust.pinning.rawValue)"
        if !trust.pins.isEmpty { trustLine += " (\(trust.pins.count) pins)" }
        if !trust.pinnedCertificates.isEmpty { trustLine += ", pinned " + trust.pinnedCertificates.joined(separator: " ") }
        trustLine += trust.validateDomain ? ", name checked" : ", name not checked"
        if trust.allowInvalidCertificates { trustLine += ", INVALID CERTIFICATES ALLOWED" }
        if let serverName = trust.serverName { trustLine += ", server name \(serverName)" }
        trustLine += ", TLS \(trust.minTLSVersion.rawValue)+"
        if let depth = trust.maxChainDepth { trustLine += ", max chain depth \(depth)" }
        if !trust.crlFiles.isEmpty { trustLine += ", CRLs " + trust.crlFiles.joined(separator: " ") }
        if trust.ocspStapling != .off { trustLine += ", OCSP stapling \(trust.ocspStapling.rawValue)" }
        lines.append(trustLine)
        if let identity { lines.append("  identity: \(identity)") }
        for rule in auth {
            lines.append("  auth: realm \(rule.realm.map { "\"\($0)\"" } ?? "any") -> \(rule.credential) ("
                + rule.schemes.map(\.rawValue).joined(separator: ", ") + "), persistence \(rule.persistence.rawValue)"
                + (rule.preemptive ? ", preemptive" : "") + ", max failures \(rule.maxFailures)"
                + (rule.spn.map { ", spn \($0)" } ?? "")
                + (rule.allowPlaintext ? ", plaintext allowed" : ""))
        }
        for rule in inject {
            switch rule.placement {
            case .header(let name, let prefix): lines.append("  inject: header \(name) <- \(prefix.isEmpty ? "" : "\"\(prefix)\" + ")\(rule.credential)")
            case .query(let name): lines.append("  inject: query \(name) <- \(rule.credential)")
            }
        }
        if !placeholders.isEmpty { lines.append("  placeholders: " + placeholders.map { "countersign:\($0)" }.joined(separator: " ")) }
        if let verifyResponses {
            lines.append("  verify responses: with \(verifyResponses.credential), covering at least " + verifyResponses.components.joined(separator: " ")
                + ", max age \(Int(verifyResponses.maxAge))s, content digest \(verifyResponses.contentDigest.rawValue)")
        }
        if let awsSign {
            lines.append("  sign: aws-sigv4 with \(awsSign.credential), payload \(awsSign.payload.rawValue)"
                + (awsSign.region.map { ", region \($0)" } ?? "") + (awsSign.service.map { ", service \($0)" } ?? ""))
        }
        if let sign {
            lines.append("  sign: \(sign.format.rawValue) with \(sign.credential) as \(sign.label) over " + sign.components.joined(separator: " ")
                + ", content digest \(sign.contentDigest.rawValue)" + (sign.expiresIn.map { ", expires after \(Int($0))s" } ?? "")
                + (sign.nonce ? ", nonce" : "") + (sign.tag.map { ", tag \($0)" } ?? "") + (sign.algorithm.map { ", \($0)" } ?? ""))
        }
        return lines
    }
}
