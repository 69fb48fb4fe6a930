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

    init(config: HostConfig, tls: UpstreamTLSContext? = nil, injection: InjectionPlan? = nil,
         signer: HostSigner? = nil, verifier: ResponseVerifier? = nil) {
        self.config = config
        self.tls = tls
        self.injection = injection
        self.signer = signer
        self.verifier = verifier
    }
}
