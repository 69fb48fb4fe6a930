/// Decodes one element of `listen`.
struct ListenerDecoding {
    let context: DecodingContext
    let hosts: HostTable
    let unlistedHosts: UnlistedHostsPolicy

    func decode(_ node: JSON5Node, at path: KeyPath) -> ListenerConfig? {
        let keys = ["address", "mode", "upstream", "allow", "proxy_auth"]
        guard let reader = ObjectReader(node, at: path, context: context, keys: keys) else { return nil }
        let errorsBefore = context.errors.count
        let address = reader.required("address", hint: "add address: \"127.0.0.1:3128\"") != nil
            ? reader.parsed("address", ListenAddress.init(parsing:)) : nil
        let mode = reader.choice("mode", of: ListenerMode.self) ?? .forward
        let upstream = reader.parsed("upstream", EndpointURL.init(parsing:))
        switch mode {
        case .gateway where !reader.has("upstream"):
            context.fail(path, at: node.position, "a gateway listener needs upstream: \"https://api.example.com\" (where its requests go)")
        case .forward where reader.has("upstream"):
            reader.fail("upstream", "upstream applies only to gateway listeners; add mode: \"gateway\" or remove upstream")
        default:
            break
        }
        if let upstream { checkGatewayUpstream(upstream, reader: reader) }
        let allow = reader.parsedArray("allow", CIDR.init(parsing:))
        if case .array(let list)? = reader.node("allow")?.value, list.isEmpty {
            reader.fail("allow", "an empty list refuses every client; list address blocks such as \"10.0.0.0/8\", or remove allow for loopback only")
        }
        var proxyAuth: ProxyAuthConfig?
        if let authNode = reader.node("proxy_auth") {
            if mode == .gateway {
                reader.fail("proxy_auth", "gateway clients do not talk to a proxy and cannot answer 407; use proxy_auth on a forward listener")
            } else {
                proxyAuth = self.proxyAuth(authNode, at: reader.keyPath("proxy_auth"))
            }
        }
        guard context.errors.count == errorsBefore, let address else { return nil }
        return ListenerConfig(address: address, mode: mode, upstream: upstream,
                              allow: allow ?? CIDR.loopback, proxyAuth: proxyAuth)
    }

    private func checkGatewayUpstream(_ upstream: EndpointURL, reader: ObjectReader) {
        if upstream.path != "/" {
            reader.fail("upstream", "a gateway forwards each request's own path; remove \"\(upstream.path)\" from upstream")
        }
        if unlistedHosts == .deny && hosts.lookup(host: upstream.host, port: upstream.port) == nil {
            reader.fail("upstream", "\(upstream.host) has no entry under `hosts` and unlisted_hosts is \"deny\", so every request would be refused; add it to hosts")
        }
    }

    private func proxyAuth(_ node: JSON5Node, at path: KeyPath) -> ProxyAuthConfig? {
        guard let reader = ObjectReader(node, at: path, context: context, keys: ["users", "realm"]) else { return nil }
        let realm = reader.text("realm") ?? "countersign"
        guard let usersNode = reader.required("users", hint: "add users: { app: { password_env: \"APP_PROXY_PASSWORD\" } }"),
              let entries = ObjectReader.namedEntries(usersNode, at: reader.keyPath("users"), context: context) else { return nil }
        guard !entries.isEmpty else {
            reader.fail("users", "must name at least one user, e.g. { app: { password_env: \"APP_PROXY_PASSWORD\" } }")
            return nil
        }
        var users: [String: Secret] = [:]
        for entry in entries {
            let userPath = reader.keyPath("users").appending(entry.key)
            if entry.key.contains(":") {
                context.fail(userPath, at: entry.keyPosition, "Basic user names cannot contain ':'")
                continue
            }
            guard let user = ObjectReader(entry.value, at: userPath, context: context, keys: ["password_env", "password_file"]) else { continue }
            switch user.secret("password") {
            case .found(let secret): users[entry.key] = secret
            case .absent: context.fail(userPath, at: entry.value.position, "missing the password; add password_env or password_file")
            case .invalid: break
            }
        }
        return ProxyAuthConfig(users: users, realm: realm)
    }
}
