/// Which hosts a new interception CA may sign for.
public enum CAScope: Equatable, Sendable {
    /// Only these (the default): a leaked CA key cannot impersonate other sites.
    case constrained(NameConstraints)
    /// Any host: no name constraints extension at all.
    case unconstrained

    /// Constrained to the configured host patterns ("host", "host:port", "*.suffix", IP literals).
    public static func hosts(_ patterns: [String]) throws -> CAScope {
        .constrained(try NameConstraints.permitting(hostPatterns: patterns))
    }
}
