import CountersignAuth
import CountersignConfig
import CountersignSigning
import CountersignTrust

/// What a snapshot compiled for one `hosts` entry — upstream TLS, injection, signer, response
/// verifier — found with one lookup when the request is routed. Before, each stage looked its
/// own part up by the entry's pattern, hashing the same string three or four times a request.
final class HostPlan: @unchecked Sendable {
    let config: HostConfig
    /// nil when the entry's trust did not compile (`check --no-secrets` without the identity).
    let tls: UpstreamTLSContext?
    let injection: InjectionPlan?
    let signer: HostSigner?
    let verifier: ResponseVerifier?
    /// The challenge answerer of the entry's `auth` rules (nil without any): each exchange with
    /// the host binds a copy of it.
    let answerer: ChallengeAnswerer?

    init(config: HostConfig, tls: UpstreamTLSContext? = nil, injection: InjectionPlan? = nil,
         signer: HostSigner? = nil, verifier: ResponseVerifier? = nil, answerer: ChallengeAnswerer? = nil) {
        self.config = config
        self.answerer = answerer
        self.tls = tls
        self.injection = injection
        self.signer = signer
        self.verifier = verifier
    }
}
