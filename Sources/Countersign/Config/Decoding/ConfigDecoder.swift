import Foundation

/// Turns the parsed tree into a `Configuration`, collecting every problem on the way.
/// Credentials are decoded first so that everything naming one can be checked against them.
struct ConfigDecoder {
    static let topLevelKeys = ["listen", "admin", "workers", "unlisted_hosts", "interception", "parent_proxy",
                               "state_dir", "credentials", "hosts", "limits", "log", "reload"]

    let context: DecodingContext

    /// nil when any error was reported.
    func decode(_ root: JSON5Node, sourcePath: String) -> Configuration? {
        guard let reader = ObjectReader(root, at: .root, context: context, keys: ConfigDecoder.topLevelKeys) else { return nil }
        let references = credentials(reader)
        let unlisted = reader.choice("unlisted_hosts", of: UnlistedHostsPolicy.self) ?? .tunnel
        let hosts = self.hosts(reader, references: references)
        let listeners = self.listeners(reader, hosts: declaredHosts(reader), unlisted: unlisted)
        let admin = reader.node("admin").flatMap { self.admin($0, at: reader.keyPath("admin")) }
        let workers = reader.int("workers", minimum: 0, meaning: "workers cannot be negative (0 means one per core)")
        let interception = reader.node("interception").flatMap { self.interception($0, at: reader.keyPath("interception")) }
        let parentProxy = reader.node("parent_proxy").flatMap {
            self.parentProxy($0, at: reader.keyPath("parent_proxy"), references: references)
        }
        let stateDir = reader.futurePath("state_dir") ?? context.absolute("state")
        let limits = reader.node("limits").flatMap { self.limits($0, at: reader.keyPath("limits")) } ?? Limits()
        let log = reader.node("log").flatMap { self.log($0, at: reader.keyPath("log")) } ?? LogConfig()
        let reload = reader.node("reload").flatMap { self.reload($0, at: reader.keyPath("reload")) } ?? ReloadConfig()

        let checks = CrossChecks(context: context, reader: reader, root: root)
        checks.addressesAreDistinct(listeners: listeners, admin: admin)
        checks.somethingIsAllowed(unlisted: unlisted)
        checks.interceptionIsConfigured(hosts: hosts, interception: interception)
        checks.stateDirIsUsable(stateDir, hosts: hosts)

        guard context.errors.isEmpty else { return nil }
        return Configuration(sourcePath: sourcePath, listeners: listeners, admin: admin,
                             workers: workers.flatMap { $0 == 0 ? nil : $0 } ?? ProcessInfo.processInfo.activeProcessorCount,
                             unlistedHosts: unlisted, interception: interception, parentProxy: parentProxy,
                             stateDir: stateDir, credentials: references.decoded, hosts: hosts, limits: limits, log: log,
                             reload: reload, namedFiles: context.namedFiles)
    }

    private func credentials(_ reader: ObjectReader) -> CredentialReferences {
        var declared: [String] = [], decoded: [String: CredentialConfig] = [:]
        if let node = reader.node("credentials"),
           let entries = ObjectReader.namedEntries(node, at: reader.keyPath("credentials"), context: context) {
            let decoding = CredentialDecoding(context: context)
            for entry in entries {
                declared.append(entry.key)
                decoded[entry.key] = decoding.decode(entry.value, at: reader.keyPath("credentials").appending(entry.key))
            }
        }
        checkOneKrb5Conf(decoded, at: reader.keyPath("credentials"))
        return CredentialReferences(declared: declared, decoded: decoded, context: context)
    }

    /// KRB5_CONFIG is one per process (MIT reads it from the environment), so every Kerberos
    /// credential that names a krb5_conf must name the same one.
    private func checkOneKrb5Conf(_ decoded: [String: CredentialConfig], at path: KeyPath) {
        let named = decoded.compactMap { name, credential in credential.kerberos?.krb5Conf.map { (name, $0) } }.sorted { $0.0 < $1.0 }
        guard let first = named.first, let other = named.first(where: { $0.1 != first.1 }) else { return }
        context.fail(path.appending(other.0).appending("kerberos").appending("krb5_conf"), at: nil,
                     "names \(other.1), but credential \"\(first.0)\" names \(first.1); one process reads one krb5.conf, so give every kerberos credential the same krb5_conf (merge the realms into one file), or run a second countersign")
    }

    private func hosts(_ reader: ObjectReader, references: CredentialReferences) -> HostTable {
        guard let node = reader.node("hosts"),
              let entries = ObjectReader.namedEntries(node, at: reader.keyPath("hosts"), context: context) else { return HostTable([]) }
        let decoding = HostDecoding(context: context, references: references)
        var hosts: [HostConfig] = []
        var seen: [HostPattern: String] = [:]
        for entry in entries {
            let path = reader.keyPath("hosts").appending(entry.key)
            if let pattern = try? HostPattern(parsing: entry.key) {
                if let first = seen[pattern] {
                    context.fail(path, at: entry.keyPosition, "names the same host as \"\(first)\" (names compare case-insensitively); merge the two entries")
                    continue
                }
                seen[pattern] = entry.key
            }
            if let host = decoding.decode(entry, at: path) { hosts.append(host) }
        }
        return HostTable(hosts)
    }

    /// Every pattern under `hosts`, even entries with errors, so those are not reported again
    /// as missing where a listener refers to their host.
    private func declaredHosts(_ reader: ObjectReader) -> HostTable {
        guard case .object(let members)? = reader.node("hosts")?.value else { return HostTable([]) }
        return HostTable(members.map { HostConfig(pattern: $0.key) })
    }

    private func listeners(_ reader: ObjectReader, hosts: HostTable, unlisted: UnlistedHostsPolicy) -> [ListenerConfig] {
        let hint = "add listen: [{ address: \"127.0.0.1:3128\" }]"
        guard reader.required("listen", hint: hint) != nil, let elements = reader.array("listen") else { return [] }
        if elements.isEmpty { reader.fail("listen", "must name at least one listener; \(hint)") }
        let decoding = ListenerDecoding(context: context, hosts: hosts, unlistedHosts: unlisted)
        return elements.compactMap { decoding.decode($0.node, at: $0.path) }
    }

    private func admin(_ node: JSON5Node, at path: KeyPath) -> AdminConfig? {
        guard let reader = ObjectReader(node, at: path, context: context, keys: ["address", "allow"]),
              reader.required("address", hint: "add address: \"127.0.0.1:9901\"") != nil,
              let address = reader.parsed("address", ListenAddress.init(parsing:)) else { return nil }
        let allow = reader.parsedArray("allow", CIDR.init(parsing:))
        if case .array(let list)? = reader.node("allow")?.value, list.isEmpty {
            reader.fail("allow", "an empty list refuses every client; list address blocks such as \"10.0.0.0/8\", or remove allow for loopback only")
        }
        return AdminConfig(address: address, allow: allow ?? CIDR.loopback)
    }

    func interception(_ node: JSON5Node, at path: KeyPath) -> InterceptionConfig? {
        guard let reader = ObjectReader(node, at: path, context: context, keys: ["ca_certificate", "ca_key"]) else { return nil }
        let certificate = reader.futurePath("ca_certificate") ?? context.absolute("certs/ca.pem")
        let key = reader.futurePath("ca_key") ?? context.absolute("certs/ca.key")
        if certificate == key {
            reader.fail("ca_key", "the CA key and certificate must be different files")
        }
        return InterceptionConfig(caCertificatePath: certificate, caKeyPath: key)
    }

    private func parentProxy(_ node: JSON5Node, at path: KeyPath, references: CredentialReferences) -> ParentProxyConfig? {
        guard let reader = ObjectReader(node, at: path, context: context, keys: ["url", "auth", "trust", "identity"]) else { return nil }
        let url = reader.required("url", hint: "add url: \"http://proxy.corp:8080\"") != nil
            ? reader.parsed("url", EndpointURL.init(parsing:)) : nil
        if let url, url.path != "/" {
            reader.fail("url", "a proxy URL has no path; write it as \"\(url.scheme)://\(url.authority)\"")
        }
        let usesTLS = url?.scheme == "https"
        var trust = TrustConfig()
        if let trustNode = reader.node("trust") {
            if let url, !usesTLS {
                reader.fail("trust", "applies only to a parent reached over TLS; write the url as \"https://\(url.authority)\" or remove trust")
            } else if let url, let pattern = try? HostPattern(parsing: url.host) {
                trust = HostDecoding(context: context, references: references)
                    .trust(trustNode, at: reader.keyPath("trust"), pattern: pattern) ?? trust
            }
        }
        let identity = reader.text("identity")
        if let identity, let identityNode = reader.node("identity") {
            if let url, !usesTLS {
                reader.fail("identity", "a client certificate needs TLS to the parent; write the url as \"https://\(url.authority)\" or remove identity")
            } else {
                references.checkIdentity(identity, at: reader.keyPath("identity"), position: identityNode.position)
            }
        }
        var auth: ProxyAuthRule?
        if let authNode = reader.node("auth") {
            auth = parentAuth(authNode, at: reader.keyPath("auth"), overTLS: url == nil || usesTLS, references: references)
        }
        return url.map { ParentProxyConfig(url: $0, auth: auth, trust: trust, identity: identity) }
    }

    /// `parent_proxy.auth`: like a host's auth rule without realm or persistence. Basic
    /// reveals the password, so naming it for an `http://` parent needs `allow_plaintext`.
    private func parentAuth(_ node: JSON5Node, at path: KeyPath, overTLS: Bool, references: CredentialReferences) -> ProxyAuthRule? {
        guard let reader = ObjectReader(node, at: path, context: context, keys: ["credential", "schemes", "max_failures", "allow_plaintext"]) else { return nil }
        let name = reader.required("credential", hint: "add credential: \"<a name under credentials>\"") != nil
            ? reader.text("credential") : nil
        var credential: ReferencedCredential?
        if let name, let nameNode = reader.node("credential") {
            credential = references.answering(name, at: reader.keyPath("credential"), position: nameNode.position)
        }
        if case .oauth2? = credential?.credential, let nameNode = reader.node("credential") {
            // Tokens are fetched for origins' Bearer challenges only.
            context.fail(reader.keyPath("credential"), at: nameNode.position,
                         "\"\(name ?? "")\" is an OAuth2 credential; a parent proxy's 407 is not answered with OAuth2 tokens: name a password credential")
        }
        let allowPlaintext = reader.bool("allow_plaintext") ?? false
        let maxFailures = reader.int("max_failures", minimum: 1, meaning: "at least one answer must be allowed to fail before giving up") ?? 1
        guard let name, let schemes = references.schemes(in: reader, for: credential, named: name) else { return nil }
        // Listed next to Digest or NTLM, Basic is only withheld (`check` warns); alone it could never be used.
        if !overTLS && !allowPlaintext, reader.has("schemes"), !schemes.isEmpty, schemes.allSatisfy(\.isPasswordEquivalent) {
            let listed = schemes.map(\.rawValue).joined(separator: ", ")
            context.fail(reader.keyPath("allow_plaintext"), at: reader.node("schemes")?.position ?? node.position,
                         "\(listed) to an http:// parent proxy would send credential \"\(name)\" in clear; use an https:// url, a scheme that does not reveal the password (digest, ntlm), or set allow_plaintext: true to accept that")
        }
        return ProxyAuthRule(credential: name, schemes: schemes, allowPlaintext: allowPlaintext, maxFailures: maxFailures)
    }

    private func limits(_ node: JSON5Node, at path: KeyPath) -> Limits? {
        let keys = ["max_connections", "max_header_bytes", "replay_body_bytes", "signed_body_bytes", "held_bodies_bytes", "connect_timeout", "header_timeout",
                    "idle_timeout", "tunnel_idle_timeout", "half_close_timeout", "drain_timeout", "h2_max_concurrent_streams"]
        guard let reader = ObjectReader(node, at: path, context: context, keys: keys + ["drain_quiet_period"]) else { return nil }
        var limits = Limits()
        let positive = "it must be at least 1"
        limits.maxConnections = reader.int("max_connections", minimum: 1, meaning: positive) ?? limits.maxConnections
        limits.maxHeaderBytes = reader.int("max_header_bytes", minimum: 1024, meaning: "a request head needs at least 1024 bytes") ?? limits.maxHeaderBytes
        limits.replayBodyBytes = reader.int("replay_body_bytes", minimum: 1, meaning: positive) ?? limits.replayBodyBytes
        limits.signedBodyBytes = reader.int("signed_body_bytes", minimum: 1, meaning: positive) ?? limits.signedBodyBytes
        limits.heldBodiesBytes = reader.int("held_bodies_bytes", minimum: 1, meaning: positive) ?? limits.heldBodiesBytes
        if limits.heldBodiesBytes < limits.signedBodyBytes {
            reader.fail("held_bodies_bytes", "is smaller than signed_body_bytes (\(limits.signedBodyBytes)), so one signed body could never be held; raise it or lower signed_body_bytes")
        }
        limits.connectTimeout = reader.duration("connect_timeout") ?? limits.connectTimeout
        limits.headerTimeout = reader.duration("header_timeout") ?? limits.headerTimeout
        limits.idleTimeout = reader.duration("idle_timeout") ?? limits.idleTimeout
        limits.tunnelIdleTimeout = reader.duration("tunnel_idle_timeout") ?? limits.tunnelIdleTimeout
        limits.halfCloseTimeout = reader.duration("half_close_timeout") ?? limits.halfCloseTimeout
        limits.drainTimeout = reader.duration("drain_timeout") ?? limits.drainTimeout
        limits.h2MaxConcurrentStreams = reader.int("h2_max_concurrent_streams", minimum: 1, meaning: positive) ?? limits.h2MaxConcurrentStreams
        limits.drainQuietPeriod = reader.duration("drain_quiet_period") ?? limits.drainQuietPeriod
        return limits
    }

    private func log(_ node: JSON5Node, at path: KeyPath) -> LogConfig? {
        guard let reader = ObjectReader(node, at: path, context: context, keys: ["level", "format", "access"]) else { return nil }
        var log = LogConfig()
        if let level = reader.choice("level", of: LevelName.self) { log.level = level.severity }
        if let format = reader.choice("format", of: FormatName.self) { log.format = format == .json ? .json : .text }
        log.access = reader.bool("access") ?? true
        return log
    }

    private func reload(_ node: JSON5Node, at path: KeyPath) -> ReloadConfig? {
        guard let reader = ObjectReader(node, at: path, context: context, keys: ["watch"]) else { return nil }
        return ReloadConfig(watch: reader.bool("watch") ?? true)
    }

    /// Configuration spellings of the logger's levels and formats.
    private enum LevelName: String, CaseIterable {
        case debug, info, warn, error
        var severity: LogLevel {
            switch self {
            case .debug: return .debug
            case .info: return .info
            case .warn: return .warn
            case .error: return .error
            }
        }
    }

    private enum FormatName: String, CaseIterable { case json, text }
}
