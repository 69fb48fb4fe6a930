/// The `hosts` entries, indexed for the per-request lookup: exact names in dictionaries,
/// wildcards by suffix, so a lookup costs a few hash probes whatever the table's size.
public struct HostTable: Sendable {
    private struct HostPort: Hashable, Sendable {
        var host: String
        var port: UInt16
    }

    /// In file order, for summaries and the status page.
    public let entries: [HostConfig]
    private let byHostAndPort: [HostPort: HostConfig]
    private let byHost: [String: HostConfig]
    private let wildcardByHostAndPort: [HostPort: HostConfig]
    private let wildcardByHost: [String: HostConfig]

    /// Entries whose pattern does not parse are skipped; the loader reports them before this runs.
    public init(_ entries: [HostConfig]) {
        self.entries = entries
        var byHostAndPort: [HostPort: HostConfig] = [:], byHost: [String: HostConfig] = [:]
        var wildcardByHostAndPort: [HostPort: HostConfig] = [:], wildcardByHost: [String: HostConfig] = [:]
        for entry in entries {
            guard let pattern = try? HostPattern(parsing: entry.pattern) else { continue }
            switch (pattern.isWildcard, pattern.port) {
            case (false, let port?): byHostAndPort[HostPort(host: pattern.host, port: port)] = entry
            case (false, nil): byHost[pattern.host] = entry
            case (true, let port?): wildcardByHostAndPort[HostPort(host: pattern.host, port: port)] = entry
            case (true, nil): wildcardByHost[pattern.host] = entry
            }
        }
        self.byHostAndPort = byHostAndPort
        self.byHost = byHost
        self.wildcardByHostAndPort = wildcardByHostAndPort
        self.wildcardByHost = wildcardByHost
    }

    public var isEmpty: Bool { entries.isEmpty }

    /// The most specific entry for a request's host and port: `host:port`, then `host`, then the
    /// longest `*.suffix` covering at least one more label (a port-specific wildcard before a
    /// plain one of the same suffix). Names compare case-insensitively; IP literals may be
    /// given with or without brackets.
    public func lookup(host: String, port: UInt16) -> HostConfig? {
        // No entry at all (a plain forwarding proxy): nothing to normalise the name for.
        if entries.isEmpty { return nil }
        let name = HostName.normalize(host)
        if let entry = byHostAndPort[HostPort(host: name, port: port)] ?? byHost[name] { return entry }
        if wildcardByHost.isEmpty && wildcardByHostAndPort.isEmpty { return nil }
        if name.utf8.contains(UInt8(ascii: ":")) || IPAddress(name) != nil { return nil }
        // Walk the suffixes after each dot, longest first; the first label is never a suffix.
        var index = name.startIndex
        while let dot = name[index...].firstIndex(of: ".") {
            let suffix = String(name[name.index(after: dot)...])
            if let entry = wildcardByHostAndPort[HostPort(host: suffix, port: port)] ?? wildcardByHost[suffix] {
                return entry
            }
            index = name.index(after: dot)
        }
        return nil
    }
}
