import CountersignConfig
import CountersignSigning

/// Where an aws-sigv4 host's keys come from: fixed keys read with the configuration (reloaded
/// with it), or temporary keys STS gives for a web identity (`AWSTemporaryKeys`).
enum AWSKeySource: Sendable {
    case fixed(AWSCredentials)
    case webIdentity(WebIdentityRole)

    init(_ credential: String, _ config: AWSCredentialsConfig) throws {
        switch config {
        case .keys(let keys):
            self = .fixed(AWSCredentials(accessKeyID: keys.accessKeyID.string, secretAccessKey: keys.secretAccessKey.bytes,
                                         sessionToken: keys.sessionToken?.string))
        case .webIdentity(let identity):
            self = .webIdentity(try WebIdentityRole(credential: credential, identity))
        }
    }

    /// The keys to sign with now; for a web identity, those fetched before the exchange started.
    func current() -> Result<AWSCredentials, ProxyError> {
        switch self {
        case .fixed(let keys): return .success(keys)
        case .webIdentity(let role): return AWSTemporaryKeys.shared.current(for: role)
        }
    }
}
