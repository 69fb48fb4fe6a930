import FoundationEssentials
@testable import CountersignAuth

/// The answerer as the proxy drives it: each step's store effects applied to its store before
/// the decision or outcome is looked at (ExchangeAuthenticator does the same through AuthRuntime).
extension ChallengeAnswerer {
    func respondApplying(to response: AuthResponseHead, request: AuthRequest, target: AuthTarget,
                         exchange: inout AuthExchange) -> ChallengeDecision {
        let step = respond(to: response, request: request, target: target, exchange: &exchange)
        store.apply(step.effects)
        return step.result
    }

    func completeApplying(response: AuthResponseHead, target: AuthTarget, exchange: inout AuthExchange) -> AuthOutcome {
        let step = complete(response: response, target: target, exchange: &exchange)
        store.apply(step.effects)
        return step.result
    }
}

extension ProtectionSpaceStore {
    /// Locks `space` out as refusals on two different requests, never accepted, do.
    func lockOut(_ space: ProtectionSpace, credentialName: String = "svc") {
        for target in ["/refused-a", "/refused-b"] {
            _ = refuse(space, on: ResourceKey(method: "GET", target: target), credentialName: credentialName, at: Date(timeIntervalSince1970: 0))
        }
    }
}
