/// Checks that span sections of the file: what no single section can see is wrong.
struct CrossChecks {
    let context: DecodingContext
    let reader: ObjectReader
    let root: JSON5Node

    /// Reports at the line of the value the path names.
    private func fail(_ path: KeyPath, _ message: String) {
        context.fail(path, at: root.node(at: path)?.position, message)
    }

    /// Two listeners (or a listener and the admin endpoint) on one address cannot both bind;
    /// a wildcard address (0.0.0.0, ::) clashes with every other address on its port.
    func addressesAreDistinct(listeners: [ListenerConfig], admin: AdminConfig?) {
        var taken: [(address: ListenAddress, owner: String)] = []
        var all = listeners.enumerated().map { ($0.element.address, "listen[\($0.offset)]", reader.keyPath("listen").appending($0.offset).appending("address")) }
        if let admin { all.append((admin.address, "admin", reader.keyPath("admin").appending("address"))) }
        for (address, owner, path) in all where address.port != 0 {
            if let clash = taken.first(where: { clashes($0.address, address) }) {
                fail(path, "\(address) is already used by \(clash.owner) (\(clash.address)); give each listener its own port")
            } else {
                taken.append((address, owner))
            }
        }
    }

    private func clashes(_ a: ListenAddress, _ b: ListenAddress) -> Bool {
        guard a.port == b.port else { return false }
        return a.isWildcard || b.isWildcard || HostName.normalize(a.host) == HostName.normalize(b.host)
    }

    /// With `deny` and no hosts, every request would be refused.
    func somethingIsAllowed(unlisted: UnlistedHostsPolicy) {
        guard unlisted == .deny else { return }
        switch reader.node("hosts")?.value {
        case nil: break
        case .object(let members)? where members.isEmpty: break
        default: return
        }
        fail(reader.keyPath("unlisted_hosts"), "\"deny\" with no entries under `hosts` refuses every request; add hosts, or use \"tunnel\"")
    }

    /// Intercepting a CONNECT needs the CA that mints the certificates.
    func interceptionIsConfigured(hosts: HostTable, interception: InterceptionConfig?) {
        guard interception == nil, let host = hosts.entries.first(where: \.intercept) else { return }
        fail(reader.keyPath("hosts").appending(host.pattern),
             "intercepts CONNECT (intercept defaults to true) but no interception CA is configured; add interception: { ca_certificate: \"certs/ca.pem\", ca_key: \"certs/ca.key\" } or set intercept: false")
    }

    /// `persistence: "permanent"` writes learned state to `state_dir`.
    func stateDirIsUsable(_ stateDir: String, hosts: HostTable) {
        for host in hosts.entries {
            guard let index = host.auth.firstIndex(where: { $0.persistence == .permanent }) else { continue }
            if let problem = context.files.problemWritingDirectory(stateDir) {
                let path = reader.keyPath("hosts").appending(host.pattern).appending("auth").appending(index).appending("persistence")
                fail(path, "persistence \"permanent\" keeps state in state_dir, but \(problem); fix state_dir or use persistence \"session\"")
                return
            }
        }
    }
}
