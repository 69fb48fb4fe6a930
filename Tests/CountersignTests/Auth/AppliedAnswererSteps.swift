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
