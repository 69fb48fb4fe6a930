/// What `countersign check` needs from the trust side: load every file a host's trust and
/// identity settings name, compile the policy, and collect each problem as a sentence.
public struct TrustConfigCheck: Sendable {
    /// Problems found, each naming what failed (the caller prefixes the config key path).
    public let errors: [String]
    /// The compiled policy when the trust settings are valid.
    public let policy: TrustPolicy?
    /// The loaded identity when one is configured and valid.
    public let identity: ClientIdentity?

    /// `pins` are the configured pin strings, checked for form; `trust.pins` should hold the
    /// same pins already decoded (the config layer decodes them with `PublicKeyPin(parsing:)`).
    public init(trust: TrustSettings, pins: [String] = [], identity source: IdentitySource? = nil) {
        var errors: [String] = []
        for text in pins {
            do { _ = try PublicKeyPin(parsing: text) } catch { errors.append("trust.pins: \(error)") }
        }
        var policy: TrustPolicy?
        do {
            policy = try TrustPolicy.load(trust)
        } catch {
            errors.append("trust: \(error)")
        }
        var identity: ClientIdentity?
        if let source {
            do {
                identity = try source.load()
            } catch {
                errors.append("identity (\(source)): \(error)")
            }
        }
        self.errors = errors
        self.policy = policy
        self.identity = identity
    }

    public var isValid: Bool { errors.isEmpty }
}
